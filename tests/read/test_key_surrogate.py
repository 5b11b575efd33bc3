"""A key that holds a lone surrogate has no UTF-8 form, so no document can hold
it (a lone ``\\uD800`` escape is a decode error): looking it up behaves as for
any absent key, as on a dict, in every state of a view (lazy, with edits
recorded as patches, unfolded into members)."""

import pytest
import qjson

LONE = "\ud800"


def lazy():
    return qjson.decode(b'{"a": 1, "b": [1, 2]}')


def patched():
    v = lazy()
    v["c"] = 3
    del v["a"]
    return v


def unfolded():
    v = lazy()
    assert v.pop("a") == 1  # pop unfolds the object into members
    return v


@pytest.mark.parametrize("make", [lazy, patched, unfolded])
def test_lone_surrogate_key_is_absent(make):
    v = make()
    before = qjson.dumps(v)
    with pytest.raises(KeyError):
        v[LONE]
    assert v.get(LONE) is None
    assert v.get(LONE, 5) == 5
    assert LONE not in v
    assert v.pop(LONE, 7) == 7
    with pytest.raises(KeyError):
        v.pop(LONE)
    with pytest.raises(KeyError):
        del v[LONE]
    assert qjson.dumps(v) == before  # nothing changed
    d = dict(v)
    with pytest.raises(KeyError):
        d[LONE]


def test_lone_surrogate_key_cannot_be_set():
    v = lazy()
    with pytest.raises(UnicodeEncodeError):
        v[LONE] = 1
    assert qjson.dumps(v) == b'{"a": 1, "b": [1, 2]}'

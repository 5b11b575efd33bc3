"""dumps of edited views whose edits are replaced values deep in untouched
containers: written as one splice of the input (the flat path of
`src/python/view/write.rs`), or, for every shape that path does not take,
level by level; both give the same bytes. Every other piece (a new value,
a key, a separator, a view of another document, the serializer's own
output around a view) must land in its place."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import qjson

DOC = b'{"a": 1, "m": [ {"r": "s", "c": "old"} , 2 ], "z": [3, {"q": 4}] }'


def test_nested_edit_keeps_every_other_byte() -> None:
    d = qjson.decode(DOC)
    d["m"][0]["c"] = "new"
    assert qjson.dumps(d) == DOC.replace(b'"old"', b'"new"')
    # Reads after the write see the edit; a second write is the same.
    assert d["m"][0]["c"] == "new"
    assert qjson.dumps(d) == DOC.replace(b'"old"', b'"new"')


def test_two_nested_edits_and_an_edit_of_an_edited_value() -> None:
    d = qjson.decode(DOC)
    d["m"][0]["c"] = "new"
    d["z"][1]["q"] = [5, 6]
    want = DOC.replace(b'"old"', b'"new"').replace(b'{"q": 4}', b'{"q": [5,6]}')
    assert qjson.dumps(d) == want
    d["z"][1]["q"] = {"deep": d["m"][0]["r"]}
    want = DOC.replace(b'"old"', b'"new"').replace(b'{"q": 4}', b'{"q": {"deep":"s"}}')
    assert qjson.dumps(d) == want


def test_views_inside_plain_values() -> None:
    d = qjson.decode(DOC)
    d["m"][0]["c"] = "new"
    edited = DOC.replace(b'"old"', b'"new"')
    clean = qjson.decode(DOC)
    # A view written inside the serializer's own output: its last run
    # must be in place before the serializer writes on.
    assert qjson.dumps({"k": d, "j": 1}) == b'{"k":' + edited + b',"j":1}'
    assert qjson.dumps([d, clean, "s"]) == b"[" + edited + b"," + DOC + b',"s"]'
    assert qjson.dumps([d["m"], d["m"][0]]) == (
        b'[[ {"r": "s", "c": "new"} , 2 ],{"r": "s", "c": "new"}]'
    )


def test_views_of_two_documents_over_one_input() -> None:
    # Two documents over one bytes object: their ranges are the same
    # memory, and a view of one set into the other is written in place.
    a, b = qjson.decode(DOC), qjson.decode(DOC)
    a["m"][0]["c"] = b["z"]
    b["z"][1]["q"] = a["a"]
    out = qjson.dumps(a)
    assert out == DOC.replace(b'"old"', b'[3, {"q": 1}]')
    assert json.loads(out)["m"][0]["c"] == [3, {"q": 1}]
    # A view of another input entirely, between runs of this one.
    other = qjson.decode(b'{"x": [7, 8]}')
    a["m"][0]["c"] = other["x"]
    a["m"][0]["r"] = other
    assert qjson.dumps(a) == DOC.replace(b'"old"', b"[7, 8]").replace(
        b'"r": "s"', b'"r": {"x": [7, 8]}'
    )


def test_views_through_default_and_dumps_many() -> None:
    d = qjson.decode(DOC)
    d["m"][0]["c"] = "new"
    edited = DOC.replace(b'"old"', b'"new"')

    class Box:
        pass

    assert qjson.dumps([Box(), 0], default=lambda _: d) == b"[" + edited + b",0]"
    assert qjson.dumps_many([d, {"n": d["m"][0]}]) == (edited + b'\n{"n":{"r": "s", "c": "new"}}\n')


def _two_branches_in_reverse_order() -> Any:
    d = qjson.decode(DOC)
    d["z"][1]["q"] = 5
    d["m"][0]["c"] = "x"
    return qjson.dumps(d)


def _replacements_out_of_order() -> Any:
    d = qjson.decode(DOC)
    d["z"] = 1
    d["a"] = 2
    return qjson.dumps(d)


def _edited_childs_key_repeats() -> Any:
    d = qjson.decode(b'{"m": [{"c": 1}], "k": 0, "m": [{"c": 2}]}')
    d["m"][0]["c"] = 9
    return qjson.dumps(d)


def _new_values_not_scalars() -> Any:
    d = qjson.decode(DOC)
    d["m"][0]["c"] = [1, {"x": None}]
    d["z"][1]["q"] = 1.5
    return qjson.dumps(d)


def _edited_child_and_replaced_member() -> Any:
    d = qjson.decode(DOC)
    d["m"][0]["c"] = True
    d["a"] = None
    return qjson.dumps(d)


def _deeper_than_the_flat_path() -> Any:
    d = qjson.decode(b'{"a": ' * 12 + b"0" + b"}" * 12)
    v = d
    for _ in range(11):
        v = v["a"]
    v["a"] = 1
    return qjson.dumps(d)


def _view_deep_in_plain_lists() -> Any:
    d = qjson.decode(DOC)
    d["m"][0]["c"] = "x"
    x: Any = d
    for _ in range(30):
        x = [x]
    return qjson.dumps(x)


def _replaced_member_with_edited_old_child() -> Any:
    d = qjson.decode(DOC)
    v = d["m"]
    v[0]["c"] = 1
    d["m"] = 5
    return qjson.dumps(d), qjson.dumps(v)


def _replaced_and_deleted() -> Any:
    d = qjson.decode(DOC)
    d["m"][0]["c"] = "x"
    del d["m"][0]["r"]
    return qjson.dumps(d)


def _escapes_and_big_ints() -> Any:
    d = qjson.decode(DOC)
    d["m"][0]["c"] = 'é\n"q"'
    d["m"][0]["r"] = -12345678901234567890123
    return qjson.dumps(d)


def _lazy_document() -> Any:
    d = qjson.parse(DOC, lazy=True).root
    d["m"][0]["c"] = "x"
    return qjson.dumps(d)


def _str_subclass() -> Any:
    class S(str):
        pass

    d = qjson.decode(DOC)
    d["m"][0]["c"] = S("sub")
    return qjson.dumps(d)


CASES: list[tuple[Callable[[], Any], Any]] = [
    (
        _two_branches_in_reverse_order,
        b'{"a": 1, "m": [ {"r": "s", "c": "x"} , 2 ], "z": [3, {"q": 5}] }',
    ),
    (_replacements_out_of_order, b'{"a": 2, "m": [ {"r": "s", "c": "old"} , 2 ], "z": 1 }'),
    (_edited_childs_key_repeats, b'{"m": [{"c": 9}],"k": 0}'),
    (
        _new_values_not_scalars,
        b'{"a": 1, "m": [ {"r": "s", "c": [1,{"x":null}]} , 2 ], "z": [3, {"q": 1.5}] }',
    ),
    (
        _edited_child_and_replaced_member,
        b'{"a": null, "m": [ {"r": "s", "c": true} , 2 ], "z": [3, {"q": 4}] }',
    ),
    (_deeper_than_the_flat_path, b'{"a": ' * 11 + b'{"a": 1' + b"}" * 12),
    (_view_deep_in_plain_lists, b"[" * 30 + DOC.replace(b'"old"', b'"x"') + b"]" * 30),
    (
        _replaced_member_with_edited_old_child,
        (b'{"a": 1, "m": 5, "z": [3, {"q": 4}] }', b'[ {"r": "s", "c": 1} , 2 ]'),
    ),
    (_replaced_and_deleted, b'{"a": 1, "m": [ {"c": "x"} , 2 ], "z": [3, {"q": 4}] }'),
    (
        _escapes_and_big_ints,
        b'{"a": 1, "m": [ {"r": -12345678901234567890123, "c": "\xc3\xa9\\n\\"q\\""} , 2 ], '
        b'"z": [3, {"q": 4}] }',
    ),
    (_lazy_document, b'{"a": 1,"m": [{"r": "s","c":"x"},2],"z": [3, {"q": 4}]}'),
    (_str_subclass, b'{"a": 1, "m": [ {"r": "s", "c": "sub"} , 2 ], "z": [3, {"q": 4}] }'),
]


@pytest.mark.parametrize(("run", "want"), CASES, ids=[c[0].__name__.strip("_") for c in CASES])
def test_flat_and_level_by_level_shapes(run: Callable[[], Any], want: Any) -> None:
    assert run() == want


# Shapes the flat path must hand to the level-by-level writer (the review's
# probes: each fails when the flat path's guard for it is dropped).


def test_nested_patched_object_with_a_repeated_key() -> None:
    # Keys not distinct: the object is written member by member, the
    # repeated key's later member dropped.
    d = qjson.decode(b'{"o": {"c": 1, "x": 2, "c": 3}, "p": [1]}')
    d["o"]["c"] = 9
    assert qjson.dumps(d) == b'{"o": {"c": 9,"x": 2}, "p": [1]}'


def test_nested_replaced_member_with_an_edited_old_child_view() -> None:
    # The old view of `m` stays cached and dirty; `m` itself was replaced.
    d = qjson.decode(b'{"w": {"m": [ {"c": "old"} ], "k": 1}, "z": 0}')
    v = d["w"]["m"]
    v[0]["c"] = "x"
    d["w"]["m"] = 5
    assert qjson.dumps(d) == b'{"w": {"m": 5, "k": 1}, "z": 0}'


def test_default_hook_that_edits_a_later_branch() -> None:
    # `default` runs Python code mid-write: the later edit must be seen.
    d = qjson.decode(b'{"a": {"x": 0}, "b": {"y": 0}}')
    b = d["b"]

    class Box:
        pass

    d["a"]["x"] = Box()
    b["y"] = "late" * 10

    def default(_: object) -> int:
        b["y"] = "changed"
        return 1

    assert qjson.dumps(d, default=default) == b'{"a": {"x": 1}, "b": {"y": "changed"}}'


def test_an_edit_at_the_bottom_of_a_deep_document_in_lists() -> None:
    # The serializer's depth limit still holds around a deep edited view.
    n = 1010
    d = qjson.decode(b'{"a":' * n + b"0" + b"}" * n)
    v = d
    for _ in range(n - 1):
        v = v["a"]
    v["a"] = 1
    x: Any = d
    for _ in range(20):
        x = [x]
    with pytest.raises(qjson.JSONEncodeError, match="Maximum nesting depth exceeded"):
        qjson.dumps(x)


def test_a_big_int_written_while_a_finalizer_edits_a_later_branch() -> None:
    # Writing an int beyond 64 bits makes objects, which may run the
    # collector and a finalizer that edits a view: the level-by-level writer
    # then writes the later branch's new value (the flat path, which found
    # its values first, must not take such an int; before it held them it
    # read a freed str here).
    import gc

    d = qjson.decode(b'{"a": {"x": 0}, "b": {"y": 0}}')
    d["a"]["x"] = 2**70
    bview = d["b"]
    bview["y"] = "".join(["victim-", *["abcdefgh"] * 8])

    class Finalized:
        def __init__(self) -> None:
            self.me = self

        def __del__(self) -> None:
            bview["y"] = "replaced"

    threshold = gc.get_threshold()
    gc.collect()
    gc.disable()
    try:
        k = Finalized()
        del k
        gc.set_threshold(1)
        gc.enable()
        out = qjson.dumps(d)
    finally:
        gc.set_threshold(*threshold)
        gc.enable()
    assert out == b'{"a": {"x": 1180591620717411303424}, "b": {"y": "replaced"}}'


# The flat path's walk is also the dirty check of a root without patches:
# a tree of cached views it finds unedited is written as one copy of the
# input (the root's surrounding whitespace included, which an edited root
# does not keep); trees it does not take go to the dirty walk and the
# level-by-level writer.

WS = b' \n {"a": 1, "m": [ {"r": "s", "c": "old"} , 2 ], "z": [3, {"q": {"d": []}}] } \n'


def _chain(n: int, leaf: bytes = b"0") -> bytes:
    return b'{"a": ' * n + leaf + b"}" * n


def test_clean_trees_of_cached_views_are_one_copy() -> None:
    d = qjson.decode(WS)
    assert qjson.dumps(d) == WS
    # Views read (and cached) at every level, none edited.
    assert d["m"][0]["c"] == "old"
    assert d["z"][1]["q"]["d"] == []
    assert qjson.dumps(d) == WS
    assert qjson.dumps(d["z"]) == b'[3, {"q": {"d": []}}]'
    # A read through an array view, then the same array written alone.
    a = qjson.decode(b" [[1, [2]], {}] ")
    assert a[0][1][0] == 2
    assert qjson.dumps(a) == b" [[1, [2]], {}] "
    assert qjson.dumps([a, d["m"]]) == b'[ [[1, [2]], {}] ,[ {"r": "s", "c": "old"} , 2 ]]'


def test_an_edit_anywhere_below_makes_the_root_edited() -> None:
    d = qjson.decode(WS)
    q = d["z"][1]["q"]
    # Set to the value it had: still an edit (the root is spliced, without
    # the whitespace around it).
    q["d"] = 5
    q["d"] = []
    body = WS.strip()
    assert qjson.dumps(d) == body
    d = qjson.decode(WS)
    d["z"][1]["q"]["d"] = None
    assert qjson.dumps(d) == body.replace(b'{"d": []}', b'{"d": null}')
    assert qjson.dumps(d["m"]) == b'[ {"r": "s", "c": "old"} , 2 ]'
    # Array edits (an insert, an unfolded array) deep under clean views.
    d = qjson.decode(WS)
    assert d["m"][0]["r"] == "s"
    d["z"][1]["q"]["d"].append(7)
    assert qjson.dumps(d) == body.replace(b'"d": []', b'"d": [7]')
    d = qjson.decode(WS)
    assert d["m"][0]["r"] == "s"
    del d["z"][0]
    assert qjson.dumps(d) == body.replace(b"[3, {", b"[{")


def test_deep_trees_of_cached_views_beside_an_edit() -> None:
    # A clean chain of cached views deeper than the flat path walks, beside
    # an edit: the write goes to the dirty walk and the level-by-level
    # writer, the same bytes.
    doc = b' {"deep": ' + _chain(12) + b', "m": [ {"c": "old"} ]} '
    d = qjson.decode(doc)
    v = d["deep"]
    for _ in range(11):
        v = v["a"]
    assert v["a"] == 0
    assert qjson.dumps(d) == doc
    d["m"][0]["c"] = "new"
    assert qjson.dumps(d) == doc.strip().replace(b'"old"', b'"new"')
    # The bottom of the chain edited too.
    v["a"] = [1]
    want = doc.strip().replace(b'"old"', b'"new"').replace(b'"a": 0', b'"a": [1]')
    assert qjson.dumps(d) == want
    # Within the flat path's depth: the chain's bottom edited alone.
    doc = b"  " + _chain(8) + b"  "
    d = qjson.decode(doc)
    v = d
    for _ in range(7):
        v = v["a"]
    v["a"] = "x"
    assert qjson.dumps(d) == _chain(8, b'"x"')


def test_a_patched_object_with_an_edited_child_below_a_clean_root() -> None:
    d = qjson.decode(b'{"w": {"k": 1, "m": [ {"c": "old"} ]}, "z": 0}')
    d["w"]["m"][0]["c"] = "x"
    d["w"]["k"] = 2
    assert qjson.dumps(d) == b'{"w": {"k": 2, "m": [ {"c": "x"} ]}, "z": 0}'
    assert qjson.dumps(d["w"]) == b'{"k": 2, "m": [ {"c": "x"} ]}'

"""Stateful property test of the view overlay: random reads, iteration,
nested writes, deletes, re-inserts, type swaps, appends, aliasing and dumps /
materialize midway, checked against an independent model of plain dicts and
lists after every step."""

from __future__ import annotations

import copy
import json
from typing import Any

import hypothesis.strategies as st
import qjson
from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
keys = st.sampled_from(["a", "b", "c", "d", "é", "k.1", ""]) | st.text(max_size=3)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=8,
)
containers = st.one_of(st.lists(values, max_size=5), st.dictionaries(keys, values, max_size=5))
layouts = st.sampled_from(
    [
        {"separators": (",", ":")},
        {"indent": 1},
        {"separators": (" , ", " : ")},
        {"indent": "\t", "ensure_ascii": False},
        {"ensure_ascii": False},
    ]
)


def nav(root: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        root = root[p]
    return root


def container_paths(model: Any) -> list[tuple[Any, ...]]:
    """Paths of every container in the model (depth-first, bounded)."""
    out: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(model, ())]
    while stack and len(out) < 64:
        v, p = stack.pop()
        if isinstance(v, dict):
            out.append(p)
            stack.extend((cv, (*p, k)) for k, cv in v.items())
        elif isinstance(v, list):
            out.append(p)
            stack.extend((cv, (*p, i)) for i, cv in enumerate(v))
    return out


class ViewMachine(RuleBasedStateMachine):
    view: Any
    model: Any

    @initialize(doc=containers, layout=layouts)
    def start(self, doc: Any, layout: dict[str, Any]) -> None:
        self.data = json.dumps(doc, **layout).encode()
        self.view = qjson.decode(self.data)
        self.model = doc
        assert qjson.dumps(self.view) == self.data

    def pick(self, data: st.DataObject, kind: type | None = None) -> tuple[Any, Any] | None:
        paths = [
            p
            for p in container_paths(self.model)
            if kind is None or type(nav(self.model, p)) is kind
        ]
        if not paths:
            return None
        p = data.draw(st.sampled_from(paths))
        return nav(self.view, p), nav(self.model, p)

    def fresh(self, data: st.DataObject) -> tuple[Any, Any]:
        """A value for the view and an equal, independent one for the model;
        containers sometimes come as views of another document."""
        v = data.draw(values)
        if isinstance(v, (dict, list)) and data.draw(st.booleans()):
            return qjson.decode(json.dumps(v)), v
        return copy.deepcopy(v), v

    # ---------------------------------------------------------------- reads

    @rule(data=st.data())
    def read(self, data: st.DataObject) -> None:
        got = self.pick(data)
        if got is None:
            return
        v, m = got
        assert len(v) == len(m)
        if isinstance(m, dict):
            assert list(v) == list(m)
            assert list(v.keys()) == list(m.keys())
            for k, cv in v.items():
                assert cv == m[k]
                assert k in v
            assert v.get("\x00missing", 7) == 7
            if m:
                k = data.draw(st.sampled_from(list(m)))
                assert v[k] == m[k]
                assert v[k] is v[k] or not isinstance(m[k], (dict, list))
        else:
            assert list(v) == m
            assert list(reversed(v)) == list(reversed(m))
            if m:
                i = data.draw(st.integers(-len(m), len(m) - 1))
                assert v[i] == m[i]
                assert v[i] is v[i] or not isinstance(m[i], (dict, list))
                a, b = sorted(data.draw(st.tuples(st.integers(-6, 6), st.integers(-6, 6))))
                assert v[a:b] == m[a:b]

    # --------------------------------------------------------------- writes

    @rule(data=st.data(), key=keys)
    def set_key(self, data: st.DataObject, key: str) -> None:
        got = self.pick(data, dict)
        if got is None:
            return
        v, m = got
        nv, nm = self.fresh(data)
        v[key] = nv
        m[key] = nm

    @rule(data=st.data())
    def del_key(self, data: st.DataObject) -> None:
        got = self.pick(data, dict)
        if got is None or not got[1]:
            return
        v, m = got
        k = data.draw(st.sampled_from(list(m)))
        del v[k]
        del m[k]

    @rule(data=st.data())
    def reinsert(self, data: st.DataObject) -> None:
        got = self.pick(data, dict)
        if got is None or not got[1]:
            return
        v, m = got
        k = data.draw(st.sampled_from(list(m)))
        x, y = v.pop(k), m.pop(k)
        assert x == y
        v[k] = x
        m[k] = y

    @rule(data=st.data())
    def set_index(self, data: st.DataObject) -> None:
        got = self.pick(data, list)
        if got is None or not got[1]:
            return
        v, m = got
        i = data.draw(st.integers(-len(m), len(m) - 1))
        nv, nm = self.fresh(data)
        v[i] = nv
        m[i] = nm

    @rule(data=st.data())
    def append_or_insert(self, data: st.DataObject) -> None:
        got = self.pick(data, list)
        if got is None:
            return
        v, m = got
        nv, nm = self.fresh(data)
        if data.draw(st.booleans()):
            v.append(nv)
            m.append(nm)
        else:
            i = data.draw(st.integers(-8, 8))
            v.insert(i, nv)
            m.insert(i, nm)

    @rule(data=st.data())
    def array_removals(self, data: st.DataObject) -> None:
        got = self.pick(data, list)
        if got is None or not got[1]:
            return
        v, m = got
        op = data.draw(st.sampled_from(["pop", "del", "delslice", "setslice", "reverse", "extend"]))
        if op == "pop":
            i = data.draw(st.integers(-len(m), len(m) - 1))
            assert v.pop(i) == m.pop(i)
        elif op == "del":
            i = data.draw(st.integers(-len(m), len(m) - 1))
            del v[i]
            del m[i]
        elif op == "delslice":
            a, b, s = data.draw(
                st.tuples(st.integers(-5, 5), st.integers(-5, 5), st.sampled_from([1, 2, -1]))
            )
            del v[a:b:s]
            del m[a:b:s]
        elif op == "setslice":
            a, b = sorted(data.draw(st.tuples(st.integers(-5, 5), st.integers(-5, 5))))
            new = data.draw(st.lists(scalars, max_size=3))
            v[a:b] = list(new)
            m[a:b] = list(new)
        elif op == "reverse":
            v.reverse()
            m.reverse()
        else:
            new = data.draw(st.lists(scalars, max_size=3))
            v.extend(new)
            m.extend(new)

    @rule(data=st.data())
    def alias(self, data: st.DataObject) -> None:
        """The same child twice: sibling aliasing (shared, as with dicts)."""
        got = self.pick(data)
        if got is None or not got[1]:
            return
        v, m = got
        if isinstance(m, dict):
            k1 = data.draw(st.sampled_from(list(m)))
            k2 = data.draw(keys)
            v[k2] = v[k1]
            m[k2] = m[k1]
        else:
            i = data.draw(st.integers(0, len(m) - 1))
            v.append(v[i])
            m.append(m[i])

    @rule(data=st.data())
    def swap_root_child_type(self, data: st.DataObject) -> None:
        """Replace a container child by a scalar or a scalar by a container."""
        got = self.pick(data)
        if got is None or not got[1]:
            return
        v, m = got
        k = data.draw(st.sampled_from(list(m) if isinstance(m, dict) else range(len(m))))
        if isinstance(m[k], (dict, list)):
            nv = nm = data.draw(scalars)
        else:
            nm = data.draw(st.sampled_from([{"x": [1, {"y": None}]}, [[], {}], {}]))
            nv = qjson.decode(json.dumps(nm))
        v[k] = nv
        m[k] = nm

    @rule()
    def dump_midway(self) -> None:
        out = qjson.dumps(self.view)
        assert json.loads(out) == self.model
        assert qjson.materialize(self.view) == self.model

    @precondition(lambda self: hasattr(self, "view"))
    @invariant()
    def agrees(self) -> None:
        assert self.view == self.model
        assert json.loads(qjson.dumps(self.view)) == self.model


ViewMachine.TestCase.settings = settings(
    max_examples=200,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TestViewState = ViewMachine.TestCase

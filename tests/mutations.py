"""Structure-aware mutations of a real log's records (hypothesis): shared by the importer fuzz and the Cline UI
records test."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

WEIRD = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=False),
                  st.text(max_size=30), st.just("x" * 200_000), st.lists(st.integers(), max_size=3),
                  st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
                  st.builds(lambda: json.loads("[" * 40 + '"deep"' + "]" * 40)))  # fresh: _mutate edits in place


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:20]):
            out += _paths(v, (*prefix, i))
    return out


def _mutate(doc: Any, data: st.DataObject) -> Any:
    for _ in range(data.draw(st.integers(1, 4))):
        paths = _paths(doc)
        path = data.draw(st.sampled_from(paths))
        op = data.draw(st.sampled_from(["replace", "delete", "unknown-type", "duplicate"]))
        if not path:
            if op == "replace":
                doc = data.draw(WEIRD)
            continue
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        key = path[-1]
        if op == "replace":
            parent[key] = data.draw(WEIRD)
        elif op == "delete":
            del parent[key]
        elif op == "unknown-type" and isinstance(parent[key], dict):
            parent[key]["type"] = data.draw(st.sampled_from(["from_the_future", "", "message", "compaction"]))
        elif op == "duplicate" and isinstance(parent, list):
            parent.insert(key, json.loads(json.dumps(parent[key])))
    return doc

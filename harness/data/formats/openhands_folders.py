"""``compbench.data.formats.openhands_folders`` — OpenHands' own folders in a walked directory, each read as the tool
reads it: one entry file a conversation, every other file in it passed over (and said).

* V1 (software-agent-sdk ``persistence_const.py`` @ 611629e): a folder with ``base_state.json`` and/or an
  ``events/`` folder of ``event-NNNNN-<id>.json`` files is one conversation, read through ``base_state.json``
  (else its first event file); ``events.json`` beside ``trajectory.json`` is one conversation, read through
  ``events.json``.
* V0 (All-Hands-AI/OpenHands ``storage/locations.py`` @ 156d068): ``sessions/<sid>/`` holds ``events/<id>.json``
  (one event a file) beside ``metadata.json``, ``event_cache/<start>-<end>.json`` (pages repeating the same
  events), ``agent_state.pkl`` and others: read through its first event file.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

V1_EVENT = re.compile(r"^event-(\d{5,})-[0-9a-fA-F\-]{8,}\.json$")  # persistence_const.py EVENT_NAME_RE
V0_EVENT = re.compile(r"^(\d+)\.json$")  # locations.py get_conversation_event_filename

Rule = tuple[Callable[[str], bool], str]  # given a file's path relative to the folder


def _first(names: Iterable[str], pattern: re.Pattern[str]) -> str | None:
    found = [(int(m.group(1)), n) for n in names if (m := pattern.match(n))]
    return min(found)[1] if found else None


def openhands_folders(names: dict[Path, set[str]]) -> dict[Path, Rule]:
    """Conversation folder -> (is this file the one to read, what the folder is), for every OpenHands folder
    among the walked files (``names``: each folder's file names)."""
    out: dict[Path, Rule] = {}
    for d in sorted(set(names) | {k.parent for k in names if k.name == "events"}):
        found = names.get(d, set())
        events = names.get(d / "events", set()) if d.name != "events" else set()
        v1 = _first(events, V1_EVENT)
        if v1 is not None:
            entry = d / ("base_state.json" if "base_state.json" in found else f"events/{v1}")
        elif {"events.json", "trajectory.json"} <= found:
            entry = d / "events.json"
        elif (first := _first(events, V0_EVENT)) is not None and (
                "metadata.json" in found or "agent_state.pkl" in found or d / "event_cache" in names):
            out[d] = (partial(operator.eq, f"events/{first}"),
                      "an OpenHands V0 session: read its events/ folder, not the {n} beside it (event cache pages, "
                      "metadata, state)")
            continue
        else:
            continue
        out[d] = (partial(operator.eq, entry.relative_to(d).as_posix()),
                  "an OpenHands conversation: read through " + entry.relative_to(d).as_posix()
                  + ", not the {n} beside it (its other event files, state)")
    return out

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

Rule = tuple[Callable[[str], bool | None], str]  # given a file's path relative to the folder: read (True), read
# with the one read (None: the importer opens it beside its entry), passed over (False)


def _first(names: Iterable[str], pattern: re.Pattern[str]) -> str | None:
    found = [(int(m.group(1)), n) for n in names if (m := pattern.match(n))]
    return min(found)[1] if found else None


def _reader(entry: str, beside: Callable[[str], bool]) -> Callable[[str], bool | None]:
    def verdict(rel: str) -> bool | None:
        return True if rel == entry else None if beside(rel) else False

    return verdict


def _events(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda rel: rel.startswith("events/") and pattern.match(rel[len("events/"):]) is not None


def openhands_folders(names: dict[Path, set[str]]) -> dict[Path, Rule]:
    """Conversation folder -> (is this file the one to read, or one read with it; what the folder is), for every
    OpenHands folder among the walked files (``names``: each folder's file names)."""
    out: dict[Path, Rule] = {}
    for d in sorted(set(names) | {k.parent for k in names if k.name == "events"}):
        found = names.get(d, set())
        events = names.get(d / "events", set()) if d.name != "events" else set()
        v1 = _first(events, V1_EVENT)
        if v1 is not None and "base_state.json" in found:
            out[d] = (_reader("base_state.json", _events(V1_EVENT)),
                      "an OpenHands conversation: read through base_state.json and its events/, not the {n} beside "
                      "them (other state)")
        elif v1 is not None:
            out[d] = (_reader(f"events/{v1}", _events(V1_EVENT)),
                      "an OpenHands conversation: read through its events/ (no base_state.json: no usage), not the "
                      "{n} beside them (other state)")
        elif {"events.json", "trajectory.json"} <= found:
            out[d] = (_reader("events.json", partial(operator.eq, "trajectory.json")),
                      "an OpenHands conversation: read through events.json with the trajectory.json beside it (its "
                      "base state: the usage), not the {n} beside them (other state)")
        elif (first := _first(events, V0_EVENT)) is not None and (
                "metadata.json" in found or "agent_state.pkl" in found or d / "event_cache" in names):
            out[d] = (_reader(f"events/{first}", _events(V0_EVENT)),
                      "an OpenHands V0 session: read its events/ folder, not the {n} beside it (event cache pages, "
                      "metadata, state)")
    return out

"""A user's home folder laid out as the tools lay it out, built small from the hand-made fixtures: every tool
compbench reads, the settings and credentials beside their logs, other programs' hidden folders, a project with
Crush's and aider's logs, dependencies, and a tool compbench does not read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from aider_logs import HISTORY, request
from openhands_shapes import write_v1_folder
from shapes import mini_doc
from stores import crush_db, goose_db, part

from helpers import FIXTURES, opencode_db

CODEX_ROLLOUT = [
    {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta",
     "payload": {"id": "0199aaaa-0000-7000-8000-000000000001", "cwd": "/home/u/app", "cli_version": "0.77.0",
                 "timestamp": "2026-01-01T00:00:00Z"}},
    {"timestamp": "2026-01-01T00:00:01Z", "type": "turn_context", "payload": {"model": "gpt-5"}},
    {"timestamp": "2026-01-01T00:00:02Z", "type": "response_item",
     "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the bug"}]}},
    {"timestamp": "2026-01-01T00:00:03Z", "type": "response_item",
     "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}},
]

# what a walk must never open: the tools' settings and credentials, other programs' files
SECRETS = (".claude/settings.json", ".claude/.credentials.json", ".claude/todos/t.json", ".codex/auth.json",
           ".codex/config.toml", ".codex/history.jsonl", ".pi/agent/settings.json", ".pi/agent/auth.json",
           ".gemini/settings.json", ".gemini/oauth_creds.json", ".copilot/config.json", ".openhands/settings.json",
           ".openhands/secrets.json", ".config/Code/User/settings.json", ".config/google-chrome/Default/Preferences",
           ".config/gh/hosts.yml", ".local/share/opencode/auth.json", ".local/share/opencode/storage/session/s.json",
           ".local/share/fonts/f.ttf", ".ssh/id_ed25519", ".aws/credentials", ".cache/pip/x.json", ".bashrc",
           ".continue/sessions/s.json", "work/app/node_modules/pkg/package.json", "work/app/.venv/pyvenv.cfg",
           "work/app/.git/config", "work/app/.crush/crush.json")


def build_home(home: Path) -> Path:
    """The home folder; returns it."""
    def put(rel: str, text: str = "{}\n") -> Path:
        p = home / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        return p

    for rel in SECRETS:
        put(rel, "secret\n" if "credential" in rel or "auth" in rel or "id_" in rel else "{}\n")
    claude = home / ".claude" / "projects" / "-home-u-app"
    claude.mkdir(parents=True)
    shutil.copy(FIXTURES / "shapes" / "claude-queue-first.jsonl", claude / "22222222-2222-4222-8222-222222222222.jsonl")
    put(".codex/sessions/2026/01/01/rollout-2026-01-01T00-00-00-0199aaaa.jsonl",
        "".join(json.dumps(r) + "\n" for r in CODEX_ROLLOUT))
    pi = home / ".pi" / "agent" / "sessions" / "--home-u-app--"
    pi.mkdir(parents=True)
    shutil.copy(FIXTURES / "pi-current.jsonl", pi / "2026-03-01T10-00-00_5f0c2a9e.jsonl")
    chats = home / ".gemini" / "tmp" / "3f4a" / "chats"
    chats.mkdir(parents=True)
    shutil.copy(FIXTURES / "gemini-cli" / "session-2026-03-01T08-00-cccc3333.jsonl", chats)
    copilot = FIXTURES / "shapes" / "copilot" / "77777777-7777-4777-8777-777777777777"
    shutil.copytree(copilot, home / ".copilot" / "session-state" / copilot.name)
    write_v1_folder(home / ".openhands" / "conversations")
    storage = home / ".config" / "Code" / "User" / "globalStorage"
    shutil.copytree(FIXTURES / "cline-family" / "saoudrizwan.claude-dev", storage / "saoudrizwan.claude-dev")
    for ext in ("rooveterinaryinc.roo-cline", "kilocode.kilo-code"):
        shutil.copytree(FIXTURES / "cline-family" / ext, storage / ext)
    downloads = home / "Downloads"  # task exports: Roo Code's, and a Kilo Code fork's in its XML protocol
    downloads.mkdir()
    for name in ("roo_task_jan-6-2026_9-30-00-am.md", "code_rider_task_mar-3-2026_9-00-00-am.md"):
        shutil.copy(FIXTURES / "cline-family" / "exports" / name, downloads)
    runs = home / "work" / "runs"  # benchmark runs kept in a project: mini-swe-agent and SWE-agent trajectories
    runs.mkdir(parents=True)
    (runs / "demo__demo-1.traj.json").write_text(json.dumps(mini_doc()), encoding="utf-8")
    ui_only = storage / "saoudrizwan.claude-dev" / "tasks" / "1700000000099"
    ui_only.mkdir()
    shutil.copy(storage / "saoudrizwan.claude-dev" / "tasks" / "1700000000001" / "ui_messages.json", ui_only)
    opencode_db(home / ".local" / "share" / "opencode" / "opencode.db",
                [{"info": {"id": "ses_home", "time": {"created": 1}}, "messages": []}])
    (home / ".local" / "share" / "goose" / "sessions").mkdir(parents=True)
    goose_db(home / ".local" / "share" / "goose" / "sessions" / "sessions.db", [{"id": "20260217_1", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}]}])
    app = home / "work" / "app"
    crush_db(app / ".crush" / "crush.db", [{"id": "c1", "messages": [
        {"id": "u1", "role": "user", "parts": [part("text", text="fix it")]},
        {"id": "a1", "role": "assistant", "parts": [part("text", text="fixed"), part("finish", reason="end_turn")]}]},
        {"id": "c2", "messages": [{"id": "u2", "role": "user", "parts": [part("text", text="hello?")]}]}])
    put("work/app/.aider.chat.history.md", HISTORY)
    put("work/app/.aider.llm.history", request(("user", "make a flask app\nwith a /hello endpoint"),
                                               reply="I'll create it."))
    return home

"""claude-code's window and its source (compbench.strategies.claude_code_window, read from the packages
2.1.170-2.1.332): from 2.1.191 a window whose source is ``auto`` is compacted only at the API's "prompt is too
long"; a model default, the environment variable or settings.json make it proactive again; each rule at, below and
above its threshold.
Sessions are hand-made: the thresholds rest on recorded usage and the recorded model name alone."""

from __future__ import annotations

import pytest

from compbench.data.transcript import Message, RecordedCompaction, Text, Transcript, Usage
from compbench.measure.tokens import TokenCounter
from compbench.sdk.session import ModelLimits, SessionView
from compbench.strategies import resolve
from compbench.strategies.claude_code import ClaudeCode
from compbench.strategies.claude_code_window import canonical, native_1m
from helpers import user, view_of

STANDARD, ONE_M = ModelLimits(200_000, 64_000), ModelLimits(1_000_000, 64_000)


def session(model: str, counter: TokenCounter, limits: ModelLimits, trailing: str = "") -> SessionView:
    """A prompt and one response of ``model`` (the log's name for it), then ``trailing`` as a tool's output."""
    answer = Message("a1", "assistant", (Text("ok"),), meta={"model": model} if model else {})
    after = [Message("r1", "user", (Text(trailing),))] if trailing else []
    return view_of([user("u1"), answer, *after], counter, limits)


def decide(spec: str, model: str, total: int, limits: ModelLimits, counter: TokenCounter,
           trailing: str = "") -> str | None:
    """The reason claude-code compacts for (``auto``, ``reactive``) when the last call used ``total``; None."""
    c = resolve(f"claude-code:{spec}").create()
    assert isinstance(c, ClaudeCode)
    v = session(model, counter, limits, trailing)
    c.after_step(v, Usage(input=total - 10, output=10))
    acts = c.before_step(v)
    return acts[0].reason if acts else None  # type: ignore[union-attr]


SOURCE_AUTO = ["claude-sonnet-4-5-20250929", "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001"]


@pytest.mark.parametrize("model", SOURCE_AUTO)
@pytest.mark.parametrize(("total", "reason"), [(166_999, None), (167_000, None), (199_999, None),
                                               (200_000, None), (200_001, "reactive")])
def test_a_200k_model_without_a_default_compacts_at_the_apis_limit(chars4: TokenCounter, model: str, total: int,
                                                                    reason: str | None) -> None:
    """2.1.217: the source is auto, the proactive check returns false; the request past the window is refused and
    compacted: about 33,000 tokens later than the 167,000 the threshold would give."""
    assert decide("preset=2.1.217", model, total, STANDARD, chars4) == reason


@pytest.mark.parametrize("model", ["claude-sonnet-4-6", "claude-opus-4-6", "claude-opus-4-8", "claude-opus-5"])
@pytest.mark.parametrize(("total", "reason"), [(166_999, None), (167_000, "auto"), (167_001, "auto")])
def test_a_model_with_a_default_compacts_at_the_threshold(chars4: TokenCounter, model: str, total: int,
                                                          reason: str | None) -> None:
    """A 1M-capable model held at 200k: the model's default window (200,000) is its source: 200k - 20k - 13k."""
    assert decide("preset=2.1.217", model, total, STANDARD, chars4) == reason


@pytest.mark.parametrize(("preset", "model", "reason"), [
    ("2.1.138", "claude-opus-4-5-20251101", "auto"),  # 2.1.190 and before: the threshold whatever the source
    ("2.1.191", "claude-opus-4-5-20251101", None),
    ("2.1.191", "claude-opus-4-6", "auto"),
    ("2.1.191", "claude-opus-4-8", None),  # joined the defaults in 2.1.217
    ("2.1.217", "claude-opus-4-8", "auto"),
    ("current", "claude-opus-4-5-20251101", None),
    ("2.1.299", "claude-haiku-4-5-20251001", None),
    ("2.1.299", "", "auto"),  # a log that names no model: the threshold it always had
])
def test_each_version_has_its_defaults(chars4: TokenCounter, preset: str, model: str, reason: str | None) -> None:
    assert decide(f"preset={preset}", model, 167_000, STANDARD, chars4) == reason


@pytest.mark.parametrize(("spec", "total", "reason"), [
    ("auto_compact_window=200000", 167_000, "auto"),  # the environment variable: source env
    ("auto_compact_window=200000", 166_999, None),
    ("settings_window=150000", 117_000, "auto"),  # settings.json: source settings
    ("settings_window=150000", 116_999, None),
    ("settings_window=100000", 67_000, "auto"),  # at the schema's floor: taken
    ("settings_window=99999", 67_000, None),  # below it: dropped, not clamped: the source is auto again
    ("settings_window=99999", 200_001, "reactive"),
    ("settings_window=1000000", 167_000, "auto"),  # at the schema's cap: taken, then the model's window
    ("settings_window=1000001", 167_000, None),  # above it: dropped
    ("auto_compact_window=99999", 67_000, "auto"),  # the environment variable is raised to 100,000 instead
    ("auto_compact_window=99999", 66_999, None),
    ("window_source=server", 167_000, "auto"),  # a window the log shows the server set
    ("autocompact_pct_override=50", 200_000, None),  # the override acts only through the proactive check
    ("autocompact_pct_override=50,settings_window=200000", 90_000, "auto"),
    ("autocompact_pct_override=50,settings_window=200000", 89_999, None),
])
def test_a_window_set_anywhere_makes_the_check_proactive(chars4: TokenCounter, spec: str, total: int,
                                                          reason: str | None) -> None:
    assert decide(f"preset=2.1.217,{spec}", "claude-sonnet-4-5-20250929", total, STANDARD, chars4) == reason


@pytest.mark.parametrize(("preset", "model", "total", "reason"), [
    ("2.1.217", "claude-opus-4-7", 967_000, None),  # native 1M at its window: auto through 2.1.259
    ("2.1.217", "claude-opus-4-7", 1_000_000, None),
    ("2.1.217", "claude-opus-4-7", 1_000_001, "reactive"),
    ("2.1.223", "claude-opus-5", 999_999, None),
    ("2.1.260", "claude-opus-4-7", 966_999, None),  # 2.1.260: a native-1M model's own window is its default
    ("2.1.260", "claude-opus-4-7", 967_000, "auto"),
    ("2.1.217", "claude-sonnet-5", 933_999, None),  # its table: 967,000 - 20,000 - 13,000
    ("2.1.217", "claude-sonnet-5", 934_000, "auto"),
    ("2.1.299", "claude-sonnet-5", 966_999, None),  # 1,000,000 from 2.1.260
    ("2.1.299", "claude-sonnet-5", 967_000, "auto"),
    ("2.1.217", "claude-opus-4-6[1m]", 1_000_001, "reactive"),  # a [1m] window: auto, and no server window
    ("current", "claude-opus-4-6[1m]", 467_000, "auto"),  # 2.1.196-2.1.216: the server's 500k
])
def test_a_1m_window_by_version(chars4: TokenCounter, preset: str, model: str, total: int,
                                reason: str | None) -> None:
    assert decide(f"preset={preset}", model, total, ONE_M, chars4) == reason


def test_the_apis_count_adds_the_messages_since_the_last_call(chars4: TokenCounter) -> None:
    """The refusal comes on the request as the API counts it: the last usage and the tool output after it (chars4:
    400 characters, 100 tokens and the message's overhead), not Claude Code's rough estimate."""
    assert decide("preset=2.1.217", SOURCE_AUTO[0], 199_850, STANDARD, chars4) is None
    assert decide("preset=2.1.217", SOURCE_AUTO[0], 199_850, STANDARD, chars4, trailing="x" * 800) == "reactive"


@pytest.mark.parametrize(("preset", "model", "limits", "total", "reason"), [
    ("2.1.223", "claude-opus-4-7", ONE_M, 167_000, "auto"),  # held to 200,000 by the proactive check
    ("2.1.223", "claude-opus-4-7", ONE_M, 166_999, None),
    ("2.1.217", "claude-opus-4-7", ONE_M, 200_001, None),  # before 2.1.223 a native model outside the list grew
    ("2.1.217", "claude-opus-4-7", ONE_M, 1_000_001, "reactive"),  # to the API's own limit
    ("2.1.217", "claude-opus-4-6", ONE_M, 167_000, "auto"),  # one on the list was held
])
def test_claude_code_disable_1m_context(chars4: TokenCounter, preset: str, model: str, limits: ModelLimits,
                                       total: int, reason: str | None) -> None:
    assert decide(f"preset={preset},disable_1m=true", model, total, limits, chars4) == reason


@pytest.mark.parametrize(("preset", "total", "reason"), [
    ("2.1.217", 167_000, None), ("2.1.217", 200_001, "reactive"),  # unknown models were auto
    ("2.1.223", 166_999, None), ("2.1.223", 167_000, "auto"),  # 2.1.223: held to their assumed window
])
def test_a_model_claude_code_does_not_know(chars4: TokenCounter, preset: str, total: int, reason: str | None) -> None:
    assert decide(f"preset={preset}", "deepseek-v4-pro", total, STANDARD, chars4) == reason


@pytest.mark.parametrize(("name", "canon", "native"), [
    ("claude-opus-4-5-20251101", "claude-opus-4-5", False),
    ("us.anthropic.claude-opus-4-7-v1:0", "claude-opus-4-7", True),
    ("anthropic/claude-sonnet-5", "claude-sonnet-5", True), ("claude-opus-4-6[1m]", "claude-opus-4-6", False),
    ("claude-opus-5-5", "claude-opus-5-5", True), ("Claude-Haiku-5-5@20260101", "claude-haiku-5-5", True),
])
def test_model_names_as_claude_code_keys_them(name: str, canon: str, native: bool) -> None:
    assert canonical(name) == canon and native_1m(name) is native


# --- what the log shows of the window's source -------------------------------------------------------------------


def log(version: str, before: int | None = None, model: str = "claude-opus-5", **meta: object) -> Transcript:
    rcs = (RecordedCompaction(3, "claude-code", trigger="auto", tokens_before=before),) if before else ()
    return Transcript("t", "claude-code", (), meta={"tool_version": version, "model": model, **meta}, compactions=rcs)


def params_for(t: Transcript) -> tuple[ClaudeCode, str]:
    configured, why = resolve("claude-code").for_log(t)
    c = configured.create()
    assert isinstance(c, ClaudeCode)
    return c, why


@pytest.mark.parametrize(("before", "source", "window"), [
    (998_659, "auto", 0),  # 2.1.219's compaction on a 1M window: the API's refusal, not a window past 1M
    (980_001, "auto", 0),
    (980_000, "", 1_013_000),  # at the effective window: a window it compacted against (+ 20,000 + 13,000)
    (466_000, "", 499_000),
])
def test_a_2_1_219_compaction_at_998659_was_reactive(before: int, source: str, window: int) -> None:
    c, why = params_for(log("2.1.219", before))
    assert (c.p.window_source, c.p.auto_compact_window) == (source, window)
    assert "read off the log" in why


@pytest.mark.parametrize(("total", "reason"), [(998_659, None), (1_000_000, None), (1_000_001, "reactive")])
def test_so_configured_it_compacts_where_the_api_refused(chars4: TokenCounter, total: int, reason: str | None) -> None:
    """claude-opus-5 on 1M (held to 200k only below 1M): no threshold, the request past 1M is refused."""
    c, _ = params_for(log("2.1.219", 998_659))
    v = session("claude-opus-5", chars4, ONE_M)
    c.after_step(v, Usage(input=total - 10, output=10))
    acts = c.before_step(v)
    assert (acts[0].reason if acts else None) == reason  # type: ignore[union-attr]


@pytest.mark.parametrize(("model", "before", "source"), [
    ("claude-sonnet-4-5-20250929", 167_100, "server"),  # auto by the rule, yet compacted at the threshold
    ("claude-sonnet-4-5-20250929", 180_001, "auto"),  # past 200k - 20k: the API's refusal
    ("claude-opus-4-6", 167_100, ""),  # its default explains it: nothing read
])
def test_a_200k_compaction_says_where_the_window_came_from(model: str, before: int, source: str) -> None:
    c, _ = params_for(log("2.1.230", before, model))
    assert c.p.window_source == source


def test_an_older_version_keeps_its_rule() -> None:
    c, _ = params_for(log("2.1.49", 180_001, "claude-opus-4-5-20251101"))
    assert c.p.window_source == "" and c.p.source_rule == ""


@pytest.mark.parametrize(("shown", "params"), [
    ({"source": "auto"}, {"window_source": "auto"}),
    ({"source": "server", "tokens": 500_000}, {"large_window": 500_000, "window_source": "server"}),
    ({"source": "env", "tokens": 300_000}, {"auto_compact_window": 300_000}),
    ({"source": "settings", "tokens": 400_000}, {"settings_window": 400_000}),
])
def test_autocompacts_report_names_the_source(shown: dict[str, object], params: dict[str, object]) -> None:
    c, why = params_for(log("2.1.230", autocompact_window={**shown, "text": "x"}))
    assert all(getattr(c.p, k) == v for k, v in params.items()) and "/autocompact reported" in why


def test_a_precomputed_summary_in_the_log_turns_it_on() -> None:
    rc = RecordedCompaction(3, "claude-code", trigger="auto", tokens_before=1_000_500,
                            meta={"compact_metadata": {"precomputed": True}})
    t = Transcript("t", "claude-code", (), meta={"tool_version": "2.1.240", "model": "claude-opus-5"},
                   compactions=(rc,))
    c, _ = params_for(t)
    assert c.p.precompute and c.p.window_source == "auto"


@pytest.mark.parametrize(("version", "preset", "said"), [
    ("2.1.332", "2.1.299", "the preset that models it"),
    ("2.1.333", "2.1.299", "newer than 2.1.332 (the newest package read)"),
    ("2.3.0", "2.1.299", "newer than 2.1.332"),
])
def test_a_version_newer_than_the_packages_read_says_so(version: str, preset: str, said: str) -> None:
    configured, why = resolve("claude-code").for_log(log(version))
    assert configured.preset == preset and said in why


# --- a precomputed summary ---------------------------------------------------------------------------------------


def grown(counter: TokenCounter, c: ClaudeCode, usages: list[int], tail: str) -> SessionView:
    """A prompt, then one response per usage (each followed by a tool's output) through after_step, ``tail`` last."""
    msgs: list[Message] = [user("u0")]
    v = view_of(msgs, counter, ONE_M)
    for k, total in enumerate(usages):
        msgs.append(Message(f"a{k}", "assistant", (Text("ok"),), meta={"model": "claude-opus-4-7"}))
        v = view_of(msgs, counter, ONE_M)
        c.after_step(v, Usage(input=total - 10, output=10))
        msgs.append(Message(f"t{k}", "user", (Text(tail if k == len(usages) - 1 else "out"),)))
    return view_of(msgs, counter, ONE_M)


@pytest.mark.parametrize(("second", "summarized"), [
    (783_999, ["u0", "a0", "t0", "a1", "t1"]),  # armed only at the last response: the view but the last round
    (784_000, ["u0", "a0", "t0"]),  # armed at 0.8 x (1M - 20,000): the summary ends there, the rest is kept
])
def test_a_precomputed_summary_keeps_what_came_after_it(chars4: TokenCounter, second: int,
                                                        summarized: list[str]) -> None:
    c = resolve("claude-code:preset=2.1.217,precompute=true").create()
    assert isinstance(c, ClaudeCode)
    v = grown(chars4, c, [700_000, second, 999_000], "x" * 8_000)
    (act,) = c.before_step(v)
    assert act.reason == "reactive"  # type: ignore[union-attr]
    assert act.request is not None and [m.id for m in act.request.source] == summarized  # type: ignore[union-attr]

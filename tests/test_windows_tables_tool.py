"""tools/windows_tables.py, which reads the tools' model tables from their repositories: its parsers on hand-made
snippets of each layout (pi's registry with quoted and bare provider keys, Roo Code's tables with nested tiers and
unquoted ids) and its rows (one per change, a later change of the same day replacing the earlier, catwalk's by
window only). Regenerating the bundled file needs the four repositories: ``python tools/windows_tables.py --pi
PI_MONO --catwalk CATWALK --roo ROO_CODE --kilo KILOCODE_LEGACY``."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest

from helpers import ROOT


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compbench_windows_tables_tool", ROOT / "tools" / "windows_tables.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


PI = """export const MODELS = {
\tanthropic: {
\t\t"claude-opus-4-5": {
\t\t\tid: "claude-opus-4-5",
\t\t\tcost: {
\t\t\t\tinput: 5,
\t\t\t},
\t\t\tcontextWindow: 200000,
\t\t\tmaxTokens: 64000,
\t\t} satisfies Model<"anthropic-messages">,
\t},
\t"openai-codex": {
\t\t"gpt-5.4": {
\t\t\tcontextWindow: 272000,
\t\t\tmaxTokens: 128000,
\t\t} satisfies Model<"openai-codex-responses">,
\t},
};
"""

ROO = """import type { ModelInfo } from "../model.js"
export const openAiNativeDefaultModelId = "gpt-5.1"
export const openAiNativeModels = {
\t"gpt-5.4": {
\t\tmaxTokens: 128000,
\t\tcontextWindow: 1_050_000, // a comment with { a brace
\t\tdescription: "GPT-5.4: {not a block}",
\t\ttiers: [
\t\t\t{ name: "flex", contextWindow: 400_000, inputPrice: 1.25 },
\t\t],
\t},
\to3: {
\t\tcontextWindow: 200_000,
\t\tmaxTokens: 100_000,
\t},
\t"vscode-only": {
\t\tcontextWindow: 12115,
\t},
} as const satisfies Record<string, ModelInfo>
"""


def test_pi_registry_in_both_layouts(tool: ModuleType) -> None:
    assert list(tool.pi_models(PI)) == [("anthropic", "claude-opus-4-5", 200_000, 64_000),
                                        ("openai-codex", "gpt-5.4", 272_000, 128_000)]


def test_roo_tables_take_each_model_s_own_figures_not_its_tiers(tool: ModuleType) -> None:
    assert list(tool.roo_models(ROO)) == [("gpt-5.4", 1_050_000, 128_000), ("o3", 200_000, 100_000),
                                          ("vscode-only", 12_115, 0)]


def test_a_row_is_added_when_the_figures_change(tool: ModuleType) -> None:
    table: dict[str, dict[str, list[list[object]]]] = {}
    for date, window, out in (("2026-01-01", 200_000, 64_000), ("2026-01-02", 200_000, 64_000),
                              ("2026-01-03", 1_000_000, 64_000), ("2026-01-03", 900_000, 64_000),
                              ("2026-01-04", 900_000, 32_000)):
        tool.record(table, "p", "m", date, window, out)
    assert table["p"]["m"] == [["2026-01-01", 200_000, 64_000], ["2026-01-03", 900_000, 64_000],
                               ["2026-01-04", 900_000, 32_000]]
    by_window: dict[str, dict[str, list[list[object]]]] = {}
    for date, window, out in (("2026-01-01", 200_000, 64_000), ("2026-01-02", 200_000, 32_000),
                              ("2026-01-03", 1_000_000, 32_000), ("2026-01-03", 200_000, 32_000)):
        tool.record(by_window, "p", "m", date, window, out, by_window=True)
    assert by_window["p"]["m"] == [["2026-01-01", 200_000, 64_000]]  # the same day's change back: no row

"""Codex code mode: the tool calls an ``exec`` script makes, read without running it. Hand-made scripts in the
shapes 0.144 rollouts show (an object literal with bare or quoted keys, a patch bound to a ``const``, calls in
``Promise.all``, a destructured result), and the shapes that must not be taken for calls."""

from __future__ import annotations

import json

import pytest

from compbench.data.formats.codex_exec import InnerCall, inner_calls, tokenize


def _args(call: InnerCall) -> dict[str, object]:
    value = json.loads(call.args)
    assert isinstance(value, dict)
    return value


def test_an_exec_command_with_bare_keys_is_the_plain_calls_json() -> None:
    script = ('const r = await tools.exec_command({cmd:"sed -n \'1,240p\' src/app/main.py",workdir:"/w",'
              'yield_time_ms:10000,max_output_tokens:30000});text(r.output)\n')
    (call,) = inner_calls(script)
    assert call.name == "exec_command"
    assert _args(call) == {"cmd": "sed -n '1,240p' src/app/main.py", "workdir": "/w", "yield_time_ms": 10000,
                           "max_output_tokens": 30000}


def test_quoted_keys_and_a_destructured_result() -> None:
    script = ('let{output,...rest}=await tools.write_stdin({"session_id":4844,"chars":"","yield_time_ms":1000});'
              'text(rest)')
    (call,) = inner_calls(script)
    assert (call.name, _args(call)) == ("write_stdin", {"session_id": 4844, "chars": "", "yield_time_ms": 1000})


def test_a_patch_bound_to_a_const_is_the_freeform_input_with_its_newlines() -> None:
    script = ('const patch = "*** Begin Patch\\n*** Update File: /w/src/app/main.py\\n@@\\n-a\\n+b\\n*** End Patch";\n'
              'text(await tools.apply_patch(patch));\n')
    (call,) = inner_calls(script)
    assert call == InnerCall("apply_patch", "*** Begin Patch\n*** Update File: /w/src/app/main.py\n@@\n-a\n+b\n"
                                            "*** End Patch")


def test_calls_in_promise_all_in_the_order_written() -> None:
    script = """const [a, b] = await Promise.all([
  tools.exec_command({cmd: "rg -n handler src"}),
  tools.mcp__codex_apps__github_fetch_pr({repo_full_name: "o/r", pr_number: 7}),
]); text(a.output); text(b);"""
    calls = inner_calls(script)
    assert [c.name for c in calls] == ["exec_command", "mcp__codex_apps__github_fetch_pr"]
    assert _args(calls[0]) == {"cmd": "rg -n handler src"} and _args(calls[1]) == {"repo_full_name": "o/r",
                                                                                  "pr_number": 7}


def test_a_value_computed_at_run_time_is_left_out() -> None:
    script = ('const body = "it\'s done";\n'
              'await tools.exec_command({cmd: "gh api -f body=\'" + body.replaceAll("\'", "x") + "\'", '
              'workdir: "/w"});')
    (call,) = inner_calls(script)
    assert _args(call) == {"workdir": "/w"}


def test_template_literals_resolve_their_bindings_and_keep_the_rest_as_written() -> None:
    script = ('const file = "src/app/main.py";\n'
              'for (const pr of [1, 2]) { await tools.exec_command({cmd: `cat ${file} # ${pr}`}); }')
    (call,) = inner_calls(script)
    assert _args(call) == {"cmd": "cat src/app/main.py # ${pr}"}


def test_concatenated_literals_and_escapes() -> None:
    script = 'await tools.exec_command({cmd: "cat " + \'caf\\u00e9.py\' + "\\x20" + `\\t`});'
    (call,) = inner_calls(script)
    assert _args(call) == {"cmd": "cat café.py \t"}


@pytest.mark.parametrize("script", [
    '// @exec: {"yield_time_ms": 1000}\n// tools.exec_command({cmd: "rm -rf x"})\ntext("no call")',
    'const s = "tools.exec_command({cmd: \'ls\'})"; text(s)',
    'const m = ALL_TOOLS.filter(x => /tools\\.exec_command\\("/.test(x.description)); text(m)',
    'await ctx.tools.exec_command({cmd: "ls"})',
    'text("no tools here")',
    'await tools.exec_command({cmd: "unterminated',
])
def test_what_is_no_call(script: str) -> None:
    assert inner_calls(script) == ([InnerCall("exec_command", '{"cmd": "unterminated"}')]
                                   if "unterminated" in script else [])


def test_a_bracketed_name_and_a_pragma_line() -> None:
    script = '// @exec: {"max_output_tokens": 500}\nconst r = await tools["exec_command"]({cmd: "ls src"});'
    assert inner_calls(script) == [InnerCall("exec_command", '{"cmd": "ls src"}')]


def test_a_regex_after_a_value_is_division() -> None:
    kinds = [t.kind for t in tokenize('const half = total / 2; const re = /a"b/g;')]
    assert kinds.count("regex") == 1 and "str" not in kinds

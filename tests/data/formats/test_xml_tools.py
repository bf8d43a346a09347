"""The XML tool protocol of Cline, Roo Code and Kilo Code (compbench.data.formats.xml_tools): calls parsed as Roo
Code's parseAssistantMessage parses them, results split at the markers the tools write, pure functions."""

from __future__ import annotations

from compbench.data.formats.xml_tools import TOOL_NAMES, parse_calls, result_names, split_results, to_native


def test_a_call_between_texts_its_parameters_trimmed_and_content_kept() -> None:
    text = ("Let me look.\n\n<read_file>\n<path> src/a.py </path>\n</read_file>\nthen\n<write_to_file>\n<path>b.py"
            "</path>\n<content>\n  x = 1\n\n</content>\n</write_to_file>")
    assert parse_calls(text, TOOL_NAMES) == [
        ("text", "Let me look."), ("call", ("read_file", {"path": "src/a.py"})), ("text", "then"),
        ("call", ("write_to_file", {"path": "b.py", "content": "  x = 1\n"}))]


def test_write_to_file_content_runs_to_its_last_closing_tag() -> None:
    text = "<write_to_file><path>d.md</path><content>use </content> to close</content></write_to_file>"
    assert parse_calls(text, TOOL_NAMES) == [("call", ("write_to_file", {"path": "d.md",
                                                                          "content": "use </content> to close"}))]


def test_a_call_left_open_by_the_stream_is_still_a_call() -> None:
    assert parse_calls("ok <execute_command><command>make te", TOOL_NAMES) == [
        ("text", "ok"), ("call", ("execute_command", {"command": "make te"}))]
    assert parse_calls("<execute_command><command>ls</command>", TOOL_NAMES) == [
        ("call", ("execute_command", {"command": "ls"}))]


def test_an_unknown_tag_is_text_and_a_forks_tool_is_known_by_its_result() -> None:
    text = "<thinking>hmm</thinking>\n<jira_ticket><key>AB-1</key></jira_ticket>"
    assert parse_calls(text, TOOL_NAMES) == [("text", text)]
    names = TOOL_NAMES | result_names(["[jira_ticket for 'AB-1'] Result:\nopen"])
    assert parse_calls(text, names)[1] == ("call", ("jira_ticket", {"key": "AB-1"}))


def test_multi_file_args_become_roo_codes_native_files_list() -> None:
    one = "<read_file><args><file><path>a.ts</path></file></args></read_file>"
    two = ("<read_file><args><file><path>a.ts</path></file><file><path>b.ts</path><line_range>1-9</line_range>"
           "</file></args></read_file>")
    assert parse_calls(one, TOOL_NAMES) == [("call", ("read_file", {"files": [{"path": "a.ts"}]}))]
    assert parse_calls(two, TOOL_NAMES)[0][1][1] == {"files": [{"path": "a.ts"}, {"path": "b.ts", "line_range": "1-9"}]}
    other = "<use_mcp_tool><args><q>x</q></args></use_mcp_tool>"
    assert parse_calls(other, TOOL_NAMES) == [("call", ("use_mcp_tool", {"args": {"q": "x"}}))]


def test_results_split_at_their_markers_and_end_at_the_environment() -> None:
    text = ("[execute_command for 'make\n  test'] Result:\nCommand executed.\n\n[read_file for 'a'] Result:\n"
            "The tool execution failed with the following error:\n<error>\nno such file\n</error>\n"
            "<environment_details>\n# Current Mode\n</environment_details>")
    assert split_results(text, TOOL_NAMES) == [
        ("result", ("execute_command", "Command executed.", False)),
        ("result", ("read_file", "The tool execution failed with the following error:\n<error>\nno such file\n"
                                 "</error>", True)),
        ("text", "<environment_details>\n# Current Mode\n</environment_details>")]


def test_a_call_not_run_is_answered_by_its_notice_and_text_before_results_stays() -> None:
    text = ("<feedback>go on</feedback>\n[update_todo_list] Result:\nTodo list updated successfully.\n"
            "Tool [attempt_completion] was not executed because a tool has already been used in this message.\n"
            "Skipping tool [read_file for 'x'] due to user rejecting a previous tool.")
    assert split_results(text, TOOL_NAMES) == [
        ("text", "<feedback>go on</feedback>"),
        ("result", ("update_todo_list", "Todo list updated successfully.", False)),
        ("result", ("attempt_completion", "Tool [attempt_completion] was not executed because a tool has already "
                                          "been used in this message.", True)),
        ("result", ("read_file", "Skipping tool [read_file for 'x'] due to user rejecting a previous tool.", True))]
    assert split_results("[not_a_tool] Result:\nx", TOOL_NAMES) == [("text", "[not_a_tool] Result:\nx")]


def test_cline_instructions_after_a_result_are_the_users_text() -> None:
    text = '[ask_followup_question for \'next?\'] Result:\n<answer>\nyes\n</answer>\n<explicit_instructions type="x">'
    assert split_results(text, TOOL_NAMES) == [
        ("result", ("ask_followup_question", "<answer>\nyes\n</answer>", False)),
        ("text", '<explicit_instructions type="x">')]


def test_to_native_pairs_results_with_the_calls_before_them_by_name() -> None:
    doc = [{"role": "user", "content": "do it"},
           {"role": "assistant", "content": [{"type": "text", "text": "<read_file><path>a</path></read_file>"
                                                                        "<list_files><path>.</path></list_files>"}]},
           {"role": "user", "content": [{"type": "text", "text": "[list_files for '.'] Result:"},
                                        {"type": "text", "text": "a\nb"},
                                        {"type": "text", "text": "[read_file for 'a'] Result:"},
                                        {"type": "image", "source": {}},
                                        {"type": "text", "text": "<environment_details>x</environment_details>"}]},
           {"role": "user", "content": "[read_file for 'z'] Result:\nlate"}]
    out, stats = to_native(doc)
    assert out[1]["xmlToolCalls"] is True
    assert [(b["type"], b.get("id"), b.get("name")) for b in out[1]["content"]] == [
        ("tool_use", "xml-1-0", "read_file"), ("tool_use", "xml-1-1", "list_files")]
    assert [(b["type"], b.get("tool_use_id"), b.get("content")) for b in out[2]["content"]] == [
        ("tool_result", "xml-1-1", "a\nb"), ("tool_result", "xml-1-0", ""), ("image", None, None),
        ("text", None, None)]
    assert out[3]["content"][0]["tool_use_id"] == "xml-3-result-3"  # nothing left to answer: an orphan
    assert (stats.calls, stats.results, stats.orphans) == (2, 3, 1)


def test_a_history_with_native_calls_is_left_as_it_is() -> None:
    doc = [{"role": "assistant", "content": [{"type": "text", "text": "<read_file><path>a</path></read_file>"},
                                             {"type": "tool_use", "id": "t1", "name": "read_file", "input": {}}]}]
    out, stats = to_native(doc)
    assert out == doc and stats.calls == 0

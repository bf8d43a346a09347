"""``compbench.store.tables`` — The run directory's tables and their declared schemas.

Every table a run writes has a schema declared here, in column order: a finished table is written with
exactly these columns and types (an empty one too), and a reader may rely on them whatever the run held (a
run where nothing was pruned still has a ``prunes`` table with every column). A row with a column not
declared here is a bug the run refuses to write; declare the column (and say what it means where it is
computed) in the same change.

Types: ``str``, ``int`` (int64), ``float`` (double), ``bool``, ``list[str]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

TABLES = ("results", "steps", "compactions", "prunes", "facts")


def _columns(text: str) -> tuple[tuple[str, str], ...]:
    return tuple((name, kind) for name, _, kind in (item.partition(":") for item in text.split()))


COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "results": _columns("""
        transcript_id:str strategy:str name:str preset:str preset_source:str swept:str source:str session:str
        project:str model:str tool_version:str window:int
        window_source:str window_known:bool window_calibrated:bool auto_compactions:int manual_compactions:int
        unchecked_compactions:int
        trigger_checked:int trigger_within:int trigger_early:int trigger_late:int trigger_within_table:int
        system_tokens:int system_tokens_source:str overhead_rate:float overhead_first_error:float
        overhead_error:float overhead_p90:float overhead_flag:str token_correction:str price_model:str
        price_model_source:str cache_ttl:str cache_ttl_source:str cache_calls:int recorded_cache_read:int
        recorded_input:int simulated_cache_read:int simulated_input:int steps:int compactions:int
        failed_compactions:int noop_compactions:int prunes:int pruned_parts:int overflows:int input_tokens:int
        output_tokens:int cache_read_tokens:int cache_write_tokens:int summarizer_input_tokens:int
        summarizer_output_tokens:int peak_context:int mean_context:float savings:float net_savings:float
        peak_ratio:float summarizer_cached_tokens:int cost_usd:float cost_savings:float cost_usd_nocache:float
        cost_savings_nocache:float reference_input_tokens:int reference_cost_usd:float
        reference_cost_usd_nocache:float reference_steps:int reference_overflows:int overflows_before_action:int
        reacquisitions:int reacquired_content_tokens:int reacquired_content_tokens_soon:int reacquired_tokens:int
        reacquired_output_tokens:int reacquired_cost_usd:float effective_savings:float effective_cost_savings:float
        oracle_present:int facts:int facts_received:int facts_boilerplate:int facts_agent:int
        facts_conventional:int needs_all:int
        needs:int needs_present:int needs_verbatim:int needs_carried:int needs_upper:int needed_recall:float
        needed_recall_lo:float needed_recall_hi:float first_action_step:int
        retention_at_compaction:float retention_at_prune:float retention_after:float retention_after_lo:float
        retention_after_hi:float artifact_f1:float fabrication_rate:float guard_summary_larger:int
        guard_dropped_constraint:int guard_fabricated:int needs_artifact:int needed_recall_artifact:float
        needs_recall:int needed_recall_recall:float needs_decision:int needed_recall_decision:float
        needs_continuation:int needed_recall_continuation:float needs_soon:int needs_later:int
        needs_present_soon:int needs_present_later:int needs_reacquired_real:int recorded_inferred:int
        agent_type:str
    """),
    "steps": _columns("""
        transcript_id:str strategy:str step:int message_id:str input:int output:int cache_read:int
        cache_write:int visible:int epoch:int overflow:bool
    """),
    "compactions": _columns("""
        transcript_id:str strategy:str seq:int step:int phase:str reason:str ok:bool tokens_before:int
        tokens_after:int replaced:int replaced_ids:list[str] kept_ids:list[str] replaced_tokens:int summary:str
        summary_tokens:int compression:float summarizer_input:int summarizer_output:int error:str attempts:int
        latency_ms:float summary_budget:int recorded_next_input:int recorded_lacks:str retention:float
        retention_verbatim:float
        retention_carried:float
        lost_facts:list[str] artifact_f1:float fabricated:list[str] guard_summary_larger:bool
        guard_dropped_constraint:bool
    """),
    "prunes": _columns("""
        transcript_id:str strategy:str seq:int step:int phase:str reason:str parts:int tokens_hidden:int
    """),
    "facts": _columns("""
        transcript_id:str strategy:str fact_id:str kind:str text:str source:str provenance:str boilerplate:bool
        first_index:int modified:bool needs:int needs_present:int lost_at_seq:int
    """),
}


def _type(kind: str) -> Any:
    import pyarrow as pa

    return {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(),
            "list[str]": pa.list_(pa.field("element", pa.string()))}[kind]  # parquet names the item "element"


def schema(table: str) -> pa.Schema:
    """The declared arrow schema of ``table``."""
    import pyarrow as pa

    return pa.schema([(name, _type(kind)) for name, kind in COLUMNS[table]])


def names(table: str) -> list[str]:
    return [name for name, _ in COLUMNS[table]]


def empty(table: str) -> pa.Table:
    """``table`` with no rows and every declared column."""
    return schema(table).empty_table()


def conform(table: str, part: pa.Table) -> pa.Table:
    """``part`` with the declared columns, in order and type: a column nobody declared is an error, a
    declared one no row had is all null, a column whose every value was null takes its declared type."""
    import pyarrow as pa

    target = schema(table)
    if part.schema == target:
        return part
    extra = [c for c in part.column_names if c not in target.names]
    if extra:
        raise RuntimeError(f"table {table}: undeclared column(s) {', '.join(extra)}; declare them in "
                           "compbench.store.tables.COLUMNS")
    columns = [part.column(f.name) if f.name in part.column_names else pa.nulls(part.num_rows, f.type)
               for f in target]
    return pa.Table.from_arrays(columns, schema=pa.schema([pa.field(f.name, c.type) for f, c in
                                                           zip(target, columns, strict=True)])).cast(target)

"""Each call's arguments are parsed once, copied at most once and checked once (issue 30).

On the way from the model's text to the committed result, a call of a step is counted:

* **parsed**: ``parse_arguments`` of its text;
* **copied**: ``snapshot_json_value`` of its argument value, or ``thaw`` of the parse's frozen
  form (the input's own ``arguments``, made when first read, of a value the parse proved
  lossless JSON); the runtime's copies (the output's own copies are not the arguments');
* **checked**: the tool's argument check (the same compiled function is the soft classifier's
  and the body's).

The counts are taken for every classifier shape (none, the constant one of ``parallel=True``, an
author's classifier, ``th.tool``'s typed tools) and through ``run_turn``. Where a phase was
handed the arguments (a pre-execute hook or an execute wrapper reading ``exec.arguments``) or
the tool changed between the classification and the body, the body checks again: those pins
are here too, with what they must answer.
"""

from __future__ import annotations

from typing import Any, Final

import attrs
import pytest

import trio_harness as th
from tests.support.runtime_tools import Passthrough, echo_tool, raw_tool, runtime_with
from trio_harness import Allow, Session, SubCall, ToolCallBlock, ToolRuntime, _json
from trio_harness._apps import turn as turn_module
from trio_harness._runtime import always_parallel, execution, pipeline, registry

ARGS = '{"x": 1, "items": [{"a": "b"}, {"a": "c"}]}'
PARAMETERS: dict[str, Any] = {
    "x": {"type": "integer"},
    "items": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "additionalProperties": False,
        },
    },
}


@attrs.define
class Counts:
    parsed: int = 0
    copied: int = 0
    checked: int = 0
    # Argument values the pool parsed: a copy is counted when its source is one of them.
    values: list[object] = attrs.field(factory=list)

    def per_call(self, calls: int) -> tuple[float, float, float]:
        return (self.parsed / calls, self.copied / calls, self.checked / calls)


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counts:
    seen = Counts()
    parse = _json.parse_arguments

    parse_frozen = _json.parse_arguments_frozen
    thaw = _json.thaw

    def counting_parse(text: str) -> Any:
        seen.parsed += 1
        value = parse(text)
        seen.values.append(value)
        return value

    def counting_parse_frozen(text: str) -> tuple[object, bytes | None]:
        seen.parsed += 1
        value, frozen = parse_frozen(text)
        seen.values.append(value)
        return value, frozen

    def counting_thaw(frozen: bytes) -> object:
        seen.copied += 1  # the input's own arguments, made from the parse's frozen form
        return thaw(frozen)

    # The pool's way to make an input's value from the text (parsed_input), and plan_groups'
    # for calls it is given no pool inputs of.
    monkeypatch.setattr(execution, "parse_arguments_frozen", counting_parse_frozen)
    monkeypatch.setattr(execution, "thaw", counting_thaw)
    monkeypatch.setattr(turn_module, "parse_arguments", counting_parse)
    for module in (registry, pipeline):
        snapshot = module.snapshot_json_value

        def counting_snapshot(value: object, _snapshot: Any = snapshot) -> Any:
            if any(value is parsed for parsed in seen.values):
                seen.copied += 1
            return _snapshot(value)

        monkeypatch.setattr(module, "snapshot_json_value", counting_snapshot)
    return seen


def _counting(runtime: ToolRuntime, name: str, counts: Counts) -> None:
    """Make the registered tool ``name`` count its argument check (one function in both plans)."""
    tools = runtime._registry._tools
    entry = tools[name]
    assert entry.plan is not None
    check = entry.plan[0]
    assert entry.classify is None or entry.classify[0] is check

    def counting_check(value: object, path: str) -> list[str]:
        counts.checked += 1
        return check(value, path)

    plan = (counting_check, *entry.plan[1:])
    classify = None if entry.classify is None else (counting_check, *entry.classify[1:])
    tools[name] = attrs.evolve(entry, plan=plan, classify=classify)


async def _body(args: Any, ctx: Any) -> str:
    return "ok"


def _tool(classifier: Any) -> th.ToolDefinition:
    return echo_tool("t", parameters=PARAMETERS, execute=_body, is_concurrency_safe=classifier)


def _mutating(classifier: Any, body: Any) -> th.ToolDefinition:
    return echo_tool(
        "m", parameters={"x": {"type": "integer"}}, execute=body, is_concurrency_safe=classifier
    )


def _author(args: Any) -> bool:
    return bool(args["x"] > 0)


CLASSIFIERS: dict[str, Any] = {"none": None, "constant": always_parallel, "author": _author}


@pytest.mark.parametrize("classifier", ["none", "constant", "author"])
async def test_a_step_parses_copies_and_checks_each_call_at_most_once(
    counts: Counts, classifier: str
) -> None:
    runtime = ToolRuntime()
    runtime.register(_tool(CLASSIFIERS[classifier]))
    _counting(runtime, "t", counts)
    calls = [ToolCallBlock(f"c{i}", "t", ARGS) for i in range(4)]
    outcome = await th.execute_tool_calls(runtime, Session(), calls)
    assert [step.result.is_error for step in outcome.results] == [False] * 4
    # The call runs with the value the parse proved lossless JSON; the one copy is the input's
    # own arguments, made only for an author's classifier (the others read nothing).
    assert counts.per_call(4) == (1, 1 if classifier == "author" else 0, 1)


async def test_invalid_arguments_are_checked_once_and_copied_once(counts: Counts) -> None:
    runtime = ToolRuntime()
    runtime.register(_tool(CLASSIFIERS["author"]))
    _counting(runtime, "t", counts)
    outcome = await th.execute_tool_calls(
        runtime, Session(), [ToolCallBlock("c", "t", '{"x": "one"}')]
    )
    assert outcome.results[0].result.content[0]["text"] == (
        'Error: invalid arguments: "x" must be an integer'
    )
    assert counts.per_call(1) == (1, 1, 1)


@pytest.mark.parametrize("listening", [False, True], ids=["no_listener", "on_event"])
async def test_a_typed_tool_in_a_turn_is_parsed_copied_and_checked_at_most_once(
    counts: Counts, listening: bool
) -> None:
    # With a listener, StepStarted's groups classify the pool's own inputs (and the tracer of
    # its ToolCommitted events holds them): still one parse, one copy, one check per call.
    @th.tool(parallel=lambda args: True)
    async def order(x: int, items: list[dict[str, str]]) -> str:
        """Order."""
        return f"{x} {len(items)}"

    runtime = ToolRuntime()
    runtime.register(order)
    _counting(runtime, "order", counts)

    class Model:
        def __init__(self) -> None:
            self.replies = [
                th.ModelStep(
                    tool_calls=tuple(ToolCallBlock(f"c{i}", "order", ARGS) for i in range(3))
                ),
                th.ModelStep(text="done"),
            ]

        async def step(self, tools: Any, /) -> th.ModelStep:
            return self.replies.pop(0)

        def add_tool_results(self, results: Any, /) -> None:
            assert [r.result.content[0]["text"] for r in results] == ["1 2"] * 3

    events: list[Any] = []
    result = await th.run_turn(
        Model(), runtime, Session(), on_event=events.append if listening else None
    )
    assert result.text == "done"
    assert counts.per_call(3) == (1, 1, 1)
    started = [event for event in events if isinstance(event, th.turn.StepStarted)]
    assert [[[call.id for call in group] for group in e.groups] for e in started] == (
        [[["c0", "c1", "c2"]]] if listening else []
    )


async def test_a_hook_handed_the_arguments_has_them_checked_again(counts: Counts) -> None:
    runtime = ToolRuntime()
    runtime.register(_tool(CLASSIFIERS["author"]))
    _counting(runtime, "t", counts)

    async def breaks(exec: Any, next: Any) -> Any:
        exec.arguments["x"] = "no longer an int"
        return Allow()

    runtime.add_pre_execute(breaks)
    outcome = await th.execute_tool_calls(runtime, Session(), [ToolCallBlock("c", "t", ARGS)])
    assert outcome.results[0].result.content[0]["text"] == (
        'Error: invalid arguments: "x" must be an integer'
    )
    # The classification's check, then the body's: the hook may have changed what it was given.
    assert counts.per_call(1) == (1, 1, 2)


async def test_a_tool_replaced_after_classification_is_checked_by_the_new_one() -> None:
    runtime = ToolRuntime()
    dispose = runtime.register(_tool(CLASSIFIERS["author"]))

    async def stricter(args: Any, ctx: Any) -> str:
        return "never runs"

    replaced: list[str] = []

    def replace(exec: Any, result: Any) -> None:
        # The first call's commit swaps the tool: the second call was classified by the old
        # one (both run in one parallel group) but must be checked by the new one.
        if not replaced:
            replaced.append(exec.call_id)
            dispose()
            runtime.register(echo_tool("t", parameters={"x": {"type": "string"}}, execute=stricter))

    runtime.add_result_observer(replace)
    calls = [ToolCallBlock("c0", "t", ARGS), ToolCallBlock("c1", "t", '{"x": 1}')]
    outcome = await th.execute_tool_calls(runtime, Session(), calls, max_parallel_tool_calls=1)
    texts = [step.result.content[0]["text"] for step in outcome.results]
    assert texts == ["ok", 'Error: invalid arguments: "x" must be a string']


async def test_a_traced_step_runs_the_untraced_path_and_its_inputs_stay_as_parsed(
    counts: Counts,
) -> None:
    class Keeps:
        def __init__(self) -> None:
            self.inputs: list[Any] = []

        def begin(self, inputs: Any, cap: int) -> None:
            self.inputs = list(inputs)

        def phase(self, phase: str, index: int, detail: object) -> None:
            pass

    async def mutates(args: Any, ctx: Any) -> str:
        args["x"] = 99
        return "ok"

    runtime = runtime_with(_mutating(None, mutates))
    _counting(runtime, "m", counts)
    tracer = Keeps()
    await th.execute_tool_calls(
        runtime, Session(), [ToolCallBlock("c", "m", '{"x":1}')], tracer=tracer
    )
    assert [input.arguments for input in tracer.inputs] == [{"x": 1}]
    # A tracer changes nothing of the call's path: one parse, one copy, one check, as untraced.
    assert counts.per_call(1) == (1, 1, 1)


def test_the_parsed_mark_is_not_part_of_the_value() -> None:
    marked = execution.parsed_input("c", "t", '{"x":1}', None)
    plain = th.ToolExecutionInput("c", "t", {"x": 1})
    assert marked == plain
    assert repr(marked) == repr(plain)
    assert hash(th.ToolExecutionInput("c", "t", 1)) == hash(
        execution.parsed_input("c", "t", "1", None)
    )


@pytest.mark.parametrize("classifier", ["none", "constant", "author"])
@pytest.mark.parametrize(
    "text",
    [
        '{"x": -0, "items": []}',
        '{"x": 1e400, "items": []}',
        '{"x": 1, "items": [], "y": -1e-400}',
        '{"x": 1, "items": [], "y": ' + "9" * 309 + "}",
    ],
)
async def test_parsed_arguments_that_are_not_lossless_fail_the_call(
    text: str, classifier: str
) -> None:
    # JSON.parse gives -0 and Infinity; the call refuses them, as a caller's value, whatever
    # reads them (the parse proves nothing for them: the checking snapshot judges them).
    runtime = ToolRuntime()
    runtime.register(_tool(CLASSIFIERS[classifier]))
    outcome = await th.execute_tool_calls(runtime, Session(), [ToolCallBlock("c", "t", text)])
    assert outcome.results[0].result.content[0]["text"] == (
        "Error: tool execution arguments must be losslessly JSON-serializable"
    )


class _Wrapper(Passthrough):
    """A scheduler wrapper that holds each input's arguments and may change them first."""

    def __init__(self, inner: Any, change: Any = None) -> None:
        super().__init__(inner)
        self.change, self.held = change, []

    async def prepare(self, input: Any) -> Any:
        self.held.append(input.arguments)
        if self.change is not None:
            self.change(input.arguments)
        return await self.inner.prepare(input)


async def _changes(args: Any, ctx: Any) -> str:
    args["x"] = 99  # the body owns its arguments
    return "ok"


@pytest.mark.parametrize("classifier", ["none", "constant", "author"])
async def test_the_body_runs_with_its_own_copy_whoever_holds_the_input(classifier: str) -> None:
    # Found by a review of an uncopied way (since replaced): a scheduler wrapper holding
    # input.arguments never sees the body's changes, and what it changes before prepare never
    # reaches the body unchecked.
    runtime = runtime_with(_mutating(CLASSIFIERS[classifier], _changes))
    holder = _Wrapper(runtime.scheduler)
    runtime.scheduler = holder
    outcome = await th.execute_tool_calls(runtime, Session(), [ToolCallBlock("c", "m", '{"x": 1}')])
    assert outcome.results[0].result.content[0]["text"] == "ok"
    assert holder.held == [{"x": 1}]

    def breaks(arguments: Any) -> None:
        arguments["x"] = "one"  # invalid: the schema says integer

    ran: list[Any] = []

    async def records(args: Any, ctx: Any) -> str:
        ran.append(dict(args))
        return "ok"

    runtime = runtime_with(_mutating(CLASSIFIERS[classifier], records))
    runtime.scheduler = _Wrapper(runtime.scheduler, breaks)
    outcome = await th.execute_tool_calls(runtime, Session(), [ToolCallBlock("c", "m", '{"x": 1}')])
    text = outcome.results[0].result.content[0]["text"]
    # The call's copy was taken before the wrapper was handed the input (the parse proved it):
    # the body runs with the model's arguments, checked.
    assert (ran, text) == ([{"x": 1}], "ok")


async def test_a_node_limit_lowered_after_the_parse_still_holds_at_prepare() -> None:
    from trio_harness.lowlevel import set_json_node_limit

    ran: list[Any] = []
    previous: list[int] = []

    async def lowers(args: Any, ctx: Any) -> str:
        ran.append(dict(args))
        if not previous:
            previous.append(set_json_node_limit(1))
        return "ok"

    runtime = runtime_with(_mutating(None, lowers))
    try:
        outcome = await th.execute_tool_calls(
            runtime,
            Session(),
            [ToolCallBlock("a", "m", '{"x": 1}'), ToolCallBlock("b", "m", '{"x": 2}')],
        )
    finally:
        if previous:
            set_json_node_limit(previous[0])
    assert ran == [{"x": 1}]
    assert outcome.results[1].result.content[0]["text"] == (
        "Error: tool execution arguments must be losslessly JSON-serializable"
    )


def _recording(seen: list[Any]) -> ToolRuntime:
    """A runtime whose parallel tool ``m`` records the arguments its body gets, then changes
    them."""

    async def keeps(args: Any, ctx: Any) -> str:
        seen.append(args)
        return await _changes(args, ctx)

    return runtime_with(_mutating(always_parallel, keeps))


async def test_a_later_execution_of_the_same_input_gets_a_copy_of_its_own() -> None:
    seen: list[Any] = []
    runtime = _recording(seen)
    input = execution.parsed_input("c", "m", '{"x": 1}', None)
    runtime.execution_mode(input)
    await runtime.execute(input)
    await runtime.execute(input)
    assert input.arguments == {"x": 1}  # the bodies changed their copies only
    assert seen[0] is not seen[1]
    assert seen[0] is not input.arguments
    assert seen[1] is not input.arguments


@pytest.mark.parametrize("read", ["never", "before", "after"])
async def test_a_proved_value_runs_as_parsed_and_the_input_keeps_a_value_of_its_own(
    counts: Counts, read: str
) -> None:
    # The call runs with the value the parse gave (no copy); the input's own arguments are made
    # from the parse's frozen form when first read, before or after the body changed its value.
    ran: list[Any] = []
    runtime = _recording(ran)
    input = execution.parsed_input("c", "m", '{"x": 1}', None)
    held = input.arguments if read == "before" else None
    assert runtime.execution_mode(input) == th.PARALLEL
    result = await runtime.execute(input)
    assert result.content[0]["text"] == "ok"
    assert len(ran) == 1
    assert ran[0] is counts.values[0]  # the parsed value itself
    assert ran[0] == {"x": 99}
    if read == "never":
        assert counts.copied == 0
    else:
        assert input.arguments == {"x": 1}
        assert input.arguments is input.arguments  # made once
        assert held is None or held is input.arguments
        assert counts.copied == 1


def test_a_parsed_input_copies_evolves_and_pickles_with_its_arguments() -> None:
    import copy
    import pickle

    input = execution.parsed_input("c", "t", '{"x": [1]}', None)
    assert attrs.evolve(input, call_id="d") == th.ToolExecutionInput("d", "t", {"x": [1]})
    assert copy.copy(input).arguments == {"x": [1]}
    assert pickle.loads(pickle.dumps(input)).arguments == {"x": [1]}
    with pytest.raises(AttributeError, match="no attribute 'argument'"):
        input.argument  # type: ignore[attr-defined]  # noqa: B018


@pytest.mark.parametrize("listening", [False, True], ids=["no_listener", "on_event"])
async def test_a_streamed_step_parses_copies_and_checks_each_call_at_most_once(
    counts: Counts, listening: bool, autojump_clock: Any
) -> None:
    # A streamed step's StepStarted (before the reply ends) holds its first call alone: one
    # group whatever its classification, so the call is not parsed for it.
    from tests.apps.scripted_model import StreamingModel

    @th.tool(parallel=True)
    async def order(x: int, items: list[dict[str, str]]) -> str:
        """Order."""
        return f"{x} {len(items)}"

    runtime = ToolRuntime()
    runtime.register(order)
    _counting(runtime, "order", counts)
    calls = [(0.5 * (i + 1), (f"c{i}", "order", ARGS)) for i in range(3)]
    model = StreamingModel([("", calls, 2.0, None), ("done", [], 0.5, None)])
    events: list[Any] = []
    result = await th.run_turn(
        model, runtime, Session(), on_event=events.append if listening else None
    )
    assert result.text == "done"
    assert [r.result.content[0]["text"] for r in model.results_seen[0]] == ["1 2"] * 3
    assert counts.per_call(3) == (1, 0, 1)
    started = [event for event in events if isinstance(event, th.turn.StepStarted)]
    assert [(e.groups, e.complete) for e in started] == (
        [(((ToolCallBlock("c0", "order", ARGS),),), False)] if listening else []
    )


@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle"])
@pytest.mark.parametrize("when", ["fresh", "classified", "executed"])
async def test_a_copied_or_pickled_parsed_input_runs_like_the_original(when: str, how: str) -> None:
    # Found by a review: a pickled note held a second UNNOTED (the copy ran on the sentinel) and
    # a classified one a compiled check (not picklable).
    import copy
    import pickle

    seen: list[Any] = []
    runtime = _recording(seen)
    input = execution.parsed_input("c", "m", '{"x": 1}', None)
    if when != "fresh":
        runtime.execution_mode(input)
    if when == "executed":
        await runtime.execute(input)
    twin = {
        "copy": copy.copy,
        "deepcopy": copy.deepcopy,
        "pickle": lambda value: pickle.loads(pickle.dumps(value)),
    }[how](input)
    assert twin == input
    result = await runtime.execute(twin)
    assert result.content[0]["text"] == "ok"
    assert seen[-1] == {"x": 99}  # ran with {"x": 1}, then changed it
    assert twin.arguments == {"x": 1}


# Found by a review: ``_create`` once marked "reading input.arguments raised" with UNSET, so an
# input whose arguments *are* UNSET (a failed result's value handed on) skipped the snapshot that
# refuses it, and the body ran on a value nobody validated.
LOSSLESS: Final = "Error: tool execution arguments must be losslessly JSON-serializable"


async def test_a_raw_tool_never_runs_on_unset_arguments() -> None:
    calls: list[Any] = []
    runtime = runtime_with(raw_tool("t", calls=calls))
    result = await runtime.execute(th.ToolExecutionInput("c", "t", th.UNSET))
    assert calls == []  # the body must not run on a value that is not lossless JSON
    assert result.content[0]["text"] == LOSSLESS


async def test_a_typed_tool_refuses_unset_arguments_as_not_lossless() -> None:
    runtime = runtime_with(echo_tool("e"))
    result = await runtime.execute(th.ToolExecutionInput("c", "e", th.UNSET))
    assert result.content[0]["text"] == LOSSLESS


async def test_a_failed_sub_result_value_handed_on_is_refused() -> None:
    # A composite that hands a sub-call's value on: a failed sub-call's value is UNSET.
    ran: list[Any] = []

    async def second(args: Any, ctx: Any) -> str:
        ran.append(args)
        return "second ran"

    async def composite(args: Any, ctx: Any) -> str:
        first = await th.execute_sub_calls(ctx, [SubCall("a", "e", {"text": 1})])  # invalid
        assert first[0].is_error
        assert first[0].value is th.UNSET
        out = await th.execute_sub_calls(ctx, [SubCall("b", "r", first[0].value)])
        return out[0].content[0]["text"]

    runtime = runtime_with(
        echo_tool("e"),
        raw_tool("r", execute=second),
        echo_tool("comp", execute=composite),
    )
    outcome = await th.execute_tool_calls(runtime, Session(), [ToolCallBlock("c", "comp", "{}")])
    assert ran == []
    assert outcome.results[0].result.content[0]["text"] == LOSSLESS

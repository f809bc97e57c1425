"""The approval flow with the OpenAI Agents SDK: ``needs_approval``, ``result.interruptions``,
``RunState`` serialized to a file by the app, approved after a restart, resumed.

    python approve_openai_agents.py URL STATE SANDBOX run
    python approve_openai_agents.py URL STATE SANDBOX approve ID
"""

import asyncio
import json
import sys
from pathlib import Path

from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    Runner,
    RunState,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

URL, STATE, SANDBOX_DIR, VERB, *CALL = sys.argv[1:]
SANDBOX = Path(SANDBOX_DIR)


# tools:start
@function_tool
def read_file(path: str) -> str:
    """Read a file."""
    return (SANDBOX / path).read_text() if (SANDBOX / path).exists() else "(missing)"


@function_tool(needs_approval=True)
def write_file(path: str, text: str) -> str:
    """Write a file."""
    (SANDBOX / path).write_text(text)
    return f"wrote {path}"


# tools:end


# glue:start
async def main() -> None:
    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=URL, api_key="k", max_retries=0)
    agent = Agent(
        name="notes",
        model=OpenAIChatCompletionsModel(model="m", openai_client=client),
        tools=[read_file, write_file],
    )
    if VERB == "run":
        result = await Runner.run(agent, "Write A to a.txt")
    else:
        state = await RunState.from_json(agent, json.loads(Path(STATE).read_text()))
        for item in state.get_interruptions():
            if item.call_id == CALL[0]:
                state.approve(item) if VERB == "approve" else state.reject(
                    item, rejection_message="no"
                )
        result = await Runner.run(agent, state)
    Path(STATE).write_text(json.dumps(result.to_state().to_json()))
    print("paused" if result.interruptions else "done", [i.call_id for i in result.interruptions])


asyncio.run(main())
# glue:end

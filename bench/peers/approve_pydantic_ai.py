"""The approval flow with pydantic-ai: ``requires_approval``, ``DeferredToolRequests`` as an
output, the message history serialized to a file by the app, ``DeferredToolResults`` after a
restart.

    python approve_pydantic_ai.py URL STATE SANDBOX run
    python approve_pydantic_ai.py URL STATE SANDBOX approve ID
"""

import asyncio
import sys
from pathlib import Path

from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ToolDenied
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

URL, STATE, SANDBOX_DIR, VERB, *CALL = sys.argv[1:]
SANDBOX = Path(SANDBOX_DIR)

agent = Agent(
    OpenAIChatModel("m", provider=OpenAIProvider(base_url=URL, api_key="k")),
    output_type=[str, DeferredToolRequests],
)


# tools:start
@agent.tool_plain
def read_file(path: str) -> str:
    """Read a file."""
    return (SANDBOX / path).read_text() if (SANDBOX / path).exists() else "(missing)"


@agent.tool_plain(requires_approval=True)
def write_file(path: str, text: str) -> str:
    """Write a file."""
    (SANDBOX / path).write_text(text)
    return f"wrote {path}"


# tools:end


# glue:start
async def main() -> None:
    if VERB == "run":
        result = await agent.run("Write A to a.txt")
    else:
        history = ModelMessagesTypeAdapter.validate_json(Path(STATE).read_bytes())
        answer = True if VERB == "approve" else ToolDenied("no")
        results = DeferredToolResults(approvals={CALL[0]: answer})
        result = await agent.run(message_history=history, deferred_tool_results=results)
    Path(STATE).write_bytes(ModelMessagesTypeAdapter.dump_json(result.all_messages()))
    output = result.output
    pending = (
        [c.tool_call_id for c in output.approvals]
        if isinstance(output, DeferredToolRequests)
        else []
    )
    print("paused" if pending else "done", pending)


asyncio.run(main())
# glue:end

"""The approval flow with trio_harness: a write that needs approval, decided after a restart.

python approve_trio_harness.py URL STATE SANDBOX run          # pauses, exits
python approve_trio_harness.py URL STATE SANDBOX approve ID   # another process resumes
"""

import sys
from pathlib import Path

import openai
import trio

import trio_harness as th
from trio_harness.providers import openai as oai

SANDBOX = Path(sys.argv[3])


# tools:start
@th.tool(parallel=True)
async def read_file(path: str) -> str:
    """Read a file."""
    return (SANDBOX / path).read_text() if (SANDBOX / path).exists() else "(missing)"


@th.tool(needs_approval=True)
async def write_file(path: str, text: str) -> str:
    """Write a file."""
    (SANDBOX / path).write_text(text)
    return f"wrote {path}"


# tools:end


# glue:start
async def main(url: str, state: str, verb: str, call_id: str | None = None) -> None:
    async with (
        openai.AsyncOpenAI(base_url=url, api_key="k", max_retries=0) as client,
        th.open_agent(
            state, oai.ChatCompletionsModel(client, "m"), [read_file, write_file]
        ) as agent,
    ):
        if verb == "run":
            result = await agent.run("Write A to a.txt")
        else:
            agent.approve(call_id) if verb == "approve" else agent.reject(call_id, message="no")
            result = await agent.run()
        print(result.stop, [call.call_id for call in result.pending])


trio.run(main, sys.argv[1], sys.argv[2], *sys.argv[4:])
# glue:end

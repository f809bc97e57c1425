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

URL, STATE, SANDBOX_DIR, VERB, *CALL = sys.argv[1:]
SANDBOX = Path(SANDBOX_DIR)


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
async def main() -> None:
    async with (
        openai.AsyncOpenAI(base_url=URL, api_key="k", max_retries=0) as client,
        th.open_agent(
            STATE, oai.ChatCompletionsModel(client, "m"), [read_file, write_file]
        ) as agent,
    ):
        if VERB == "run":
            result = await agent.run("Write A to a.txt")
        else:
            agent.approve(CALL[0]) if VERB == "approve" else agent.reject(CALL[0], message="no")
            result = await agent.run()
        print(result.stop, [call.call_id for call in result.pending])


trio.run(main)
# glue:end

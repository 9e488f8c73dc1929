"""A Python agent whose destructive tool, delete_source, runs only once a person approves it in Tollgate.

The read-only get_source runs at once (the policy lets it through); delete_source waits for a decision, then runs
with the approved arguments (an approver may have edited them), or raises ToolCallRejected saying who refused and why.

    npm start                                                               # Tollgate, in another terminal
    pip install ./clients/python
    TOLLGATE_TOKEN=$(npx tollgate token --sub support-bot --role agent) python examples/python/agent.py
    # then decide in the web inbox at http://127.0.0.1:8080/, or: npx tollgate pending / approve / reject
"""

from __future__ import annotations

import os
import time
from typing import Any

from tollgate import Tollgate, ToolCallRejected, current_run

#: The knowledge base the tools read and delete from (a stand-in for your API).
SOURCES = {"src_1": "Pricing FAQ", "src_2": "Old pricing FAQ", "src_3": "Archive"}


def main(url: str, token: str, conversation_id: str | None = None) -> str:
    tollgate = Tollgate(url, token)
    conv = tollgate.conversation(conversation_id or f"python-example-{int(time.time())}",
                                 user={"id": "ann", "roles": ["admin"], "name": "Ann"},
                                 title="Tidy the knowledge base (Python)")

    @conv.guard("get_source", annotations={"isReadOnly": True})  # unregistered tools are judged by these flags
    def get_source(id: str) -> dict[str, Any]:
        return {"id": id, "title": SOURCES.get(id)}

    @conv.guard("delete_source", annotations={"destructive": True},
                display=lambda a: {"title": f"Delete source {a['id']}", "summary": "This cannot be undone."},
                reason="The user asked to remove the outdated FAQ")
    def delete_source(id: str) -> dict[str, Any]:
        run = current_run()  # the receipt of this run, for your backend to check, and whether the arguments were edited
        return {"deleted": id, "existed": SOURCES.pop(id, None) is not None, "edited": bool(run and run.edited)}

    print("get_source:", get_source(id="src_2"))
    print(f"Waiting for a decision on delete_source in conversation {conv.id} (open the web inbox)…", flush=True)
    try:
        answer = f"The tool said: {delete_source(id='src_2')}"
    except ToolCallRejected as e:
        answer = f"The tool said: {e}"
    print(answer)
    return answer


if __name__ == "__main__":
    main(os.environ.get("TOLLGATE_URL", "http://127.0.0.1:8080"), os.environ["TOLLGATE_TOKEN"])

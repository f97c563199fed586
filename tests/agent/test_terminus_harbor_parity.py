"""The turn parser reads replies as Harbor's own Terminus-2 parser does.

Each reply below (well-formed, malformed, incomplete, with text around it, with braces in
strings, with a string ``task_complete``, empty) goes to TermGrade's
:func:`~termgrade.agent.terminus_turns.parse_turn` and to Harbor 0.26's
``TerminusJSONPlainParser`` (run in Harbor's own venv): both must agree on whether it is
an error, which keystrokes run with which durations, and whether it asks to finish.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from termgrade.agent.terminus_turns import parse_turn
from tests.support.harbor import Harbor
from tests.support.scripted_llm import WORD_FREQUENCY_REPLIES
from tests.support.scripted_terminus import MALFORMED_JSON, MISSING_PLAN, NOT_JSON, turn

pytestmark = pytest.mark.harbor

REPLIES = [
    *WORD_FREQUENCY_REPLIES,
    MALFORMED_JSON, MISSING_PLAN, NOT_JSON, "", "[1, 2]",
    turn("a", "p", [("ls -la\n", 0.1), ("C-c", 2)]),
    turn("a", "p", [("", 10.0)]),
    '{"analysis": "a"}',
    '{"analysis": "a", "plan": "p", "commands": "ls"}',
    '{"analysis": "a", "plan": "p", "commands": ["ls"]}',
    '{"analysis": "a", "plan": "p", "commands": [{"duration": 1}]}',
    '{"analysis": "a", "plan": "p", "commands": [{"keystrokes": 5}]}',
    '{"analysis": "a", "plan": "p", "commands": [{"duration": 1}], "task_complete": true}',
    'Here it is:\n{"analysis": "a", "plan": "p", "commands": [{"keystrokes": "ls"}, '
    '{"keystrokes": "pwd\\n", "duration": "soon", "why": 1}]}\nThanks',
    '{"analysis": "a", "plan": "p", "commands": []',
    'x ' + turn("a}", "p{", [("awk '{print $1}' f\n", 0.1)]),
    '{"analysis": "a", "plan": "p", "commands": [], "task_complete": "true"}',
    '{"analysis": "a", "plan": "p", "commands": [], "task_complete": "False"}',
    '```json\n' + turn("a", "p", [("ls\n", 0.1)]) + '\n```',
    turn("a", "p", [("ls\n", 0.1)]) + " " + turn("b", "q", [("pwd\n", 0.1)]),
    '{"analysis": 5, "plan": null, "commands": []}',
]

HARBOR_PARSES = """
import json, os, sys
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # no network fetch at import
from harbor.agents.terminus_2.terminus_json_plain_parser import TerminusJSONPlainParser
parser = TerminusJSONPlainParser()
out = []
for reply in json.load(open(sys.argv[1])):
    r = parser.parse_response(reply)
    out.append({"error": bool(r.error), "complete": bool(r.is_task_complete),
                "commands": [[c.keystrokes, c.duration] for c in r.commands]})
print(json.dumps(out))
"""


def test_every_reply_reads_as_harbor_reads_it(harbor: Harbor, tmp_path: Path) -> None:
    cases = tmp_path / "replies.json"
    cases.write_text(json.dumps(REPLIES))
    done = harbor.python_run(HARBOR_PARSES, str(cases), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    ours = [{"error": not t.valid, "complete": t.task_complete,
             "commands": [[c.keys, c.duration_s] for c in t.commands]}
            for t in map(parse_turn, REPLIES)]
    differ = [(reply, mine, harbor_reads) for reply, mine, harbor_reads
              in zip(REPLIES, ours, theirs, strict=True) if mine != harbor_reads]
    assert differ == []
    turns = [parse_turn(reply) for reply in REPLIES]
    assert sum(not t.valid for t in turns) >= 8 and any(t.task_complete for t in turns)

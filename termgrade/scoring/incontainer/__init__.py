"""Code the grader copies into the scoring container.

Each program staged in B is one file, assembled at staging time
(``termgrade.scoring.verifier.attestation._source``): a line
``from <sibling> import ...  # type: ignore[import-not-found]  # staged inline`` is replaced
by that sibling module's text, so the plugin, staged under a random module name, imports
nothing by a name the agent could predict. The programs: ``termgrade_attest`` (the pytest
plugin, with ``attest_alarms``, ``attest_evidence``, ``attest_marks``, ``attest_proc``),
``termgrade_broker`` (with ``broker_memory``, ``broker_proc``, ``broker_pytest_check``; it
imports ``termgrade_watch``, with ``watch_base``, ``watch_path`` and ``watch_names``, from
beside it), ``sitecustomize``. ``signed_line`` (the line format and its signer) is staged
into both and read by the host's reader too. The raw files import one another as top-level
modules with this directory on ``sys.path`` (as the tests run them). None imports
TermGrade, and all keep to Python 3.8's syntax.
"""

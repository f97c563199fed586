"""TermGrade: build, verify, grade, package and publish terminal-agent RL tasks.

The library is the API; the ``termgrade`` command is a thin layer over it::

    from termgrade import load_task, verify_tasks
    task = load_task("environments/csv-column-sum")
"""

from termgrade.task import Task, discover_tasks, load_task

__version__ = "0.1.0"
__all__ = ["Task", "__version__", "discover_tasks", "load_task"]

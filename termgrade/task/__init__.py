"""Task directories: layout, config and loading."""

from termgrade.task.config import TaskConfig, parse_size_mb
from termgrade.task.model import Task, discover_tasks, is_task_dir, load_task
from termgrade.task.paths import CONTAINER, ContainerPaths, TaskPaths

__all__ = [
    "CONTAINER",
    "ContainerPaths",
    "Task",
    "TaskConfig",
    "TaskPaths",
    "discover_tasks",
    "is_task_dir",
    "load_task",
    "parse_size_mb",
]

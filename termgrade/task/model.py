"""A task: its id, config, instruction and paths, loaded from a Harbor task directory."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from termgrade.task.config import TaskConfig
from termgrade.task.errors import TaskLoadError
from termgrade.task.ids import safe_name, task_id_problem
from termgrade.task.paths import TaskPaths


def image_tag_for(task_id: str) -> str:
    """The tag a task's image is built as."""
    return f"termgrade/task-{safe_name(task_id)}:local"


@dataclass(frozen=True)
class VerifierImageSource:
    """Where a separate-mode verifier's image comes from, in Harbor's order of precedence:
    ``[verifier.environment] docker_image`` (prebuilt), else ``tests/Dockerfile`` (built
    offline from ``tests/``), else neither: a fresh container of the task's own image."""

    docker_image: str | None = None
    context: Path | None = None
    """The build context (``tests/``) when the image is built from ``tests/Dockerfile``."""

    @property
    def own_image(self) -> bool:
        """Whether the verifier runs in an image other than the task's."""
        return self.docker_image is not None or self.context is not None


@dataclass(frozen=True)
class Task:
    task_id: str
    paths: TaskPaths
    config: TaskConfig
    instruction: str

    @property
    def safe_name(self) -> str:
        """The id as Docker takes it in names (:func:`termgrade.task.ids.safe_name`)."""
        return safe_name(self.task_id)

    @property
    def image_tag(self) -> str:
        return image_tag_for(self.task_id)

    @property
    def has_solution(self) -> bool:
        """Whether the task ships ``solution/solve.sh``: many third-party corpora keep
        their reference solutions private, so the oracle cannot run on them."""
        return self.paths.solve_script.is_file()

    @property
    def verifier_image_source(self) -> VerifierImageSource | None:
        """The separate verifier's image (None in shared mode: the verifier grades in a
        container of the task's image, as TermGrade always has)."""
        if not self.config.separate_verifier:
            return None
        declared = self.config.verifier.environment
        if declared is not None and declared.docker_image:
            return VerifierImageSource(docker_image=declared.docker_image)
        if self.paths.verifier_dockerfile.is_file():
            return VerifierImageSource(context=self.paths.tests_dir)
        return VerifierImageSource()

    @property
    def wants_internet(self) -> bool:
        """``[environment] allow_internet = true``: the task asks for the network, which
        TermGrade never gives; it is run offline only when the user says so."""
        return bool(self.config.environment.allow_internet)


def _config_error(path: Path, exc: ValidationError) -> TaskLoadError:
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or None
    return TaskLoadError(
        path,
        first["msg"],
        field=field,
        fix="correct that field (see Harbor's task.toml reference); unknown keys are kept",
    )


def _verifier_source_problem(paths: TaskPaths, config: TaskConfig) -> TaskLoadError | None:
    """A separate verifier declared in a form TermGrade cannot build."""
    if not config.separate_verifier:
        return None
    declared = config.verifier.environment
    if declared is not None and declared.docker_image:
        return None
    if not paths.verifier_dockerfile.is_file() and paths.verifier_compose.is_file():
        return TaskLoadError(
            paths.verifier_compose, "a compose verifier environment is not supported "
            "(TermGrade builds one verifier image, offline)", field="verifier.environment",
            fix=f"describe the verifier's image in {paths.verifier_dockerfile} instead")
    return None


def load_task(directory: str | Path) -> Task:
    """Load and check one task directory; raise :class:`TaskLoadError` naming the problem."""
    root = Path(directory).resolve()
    paths = TaskPaths(root)
    if not root.is_dir():
        raise TaskLoadError(root, "not a directory", fix="pass a task directory")
    task_id = root.name
    problem = task_id_problem(task_id)
    if problem is not None:
        raise TaskLoadError(root, problem, fix="rename the directory")
    for file, role in paths.required():
        if not file.is_file():
            raise TaskLoadError(file, f"missing ({role})", fix=f"create {file.name}")
    try:
        raw = tomllib.loads(paths.config.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TaskLoadError(paths.config, f"not valid TOML: {exc}", fix="fix the syntax") from exc
    try:
        config = TaskConfig.model_validate(raw)
    except ValidationError as exc:
        raise _config_error(paths.config, exc) from exc
    source_problem = _verifier_source_problem(paths, config)
    if source_problem is not None:
        raise source_problem
    try:
        instruction = paths.instruction.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TaskLoadError(paths.instruction, "not UTF-8", fix="re-save as UTF-8") from exc
    if not instruction.strip():
        raise TaskLoadError(paths.instruction, "empty", fix="describe the task")
    return Task(task_id=task_id, paths=paths, config=config, instruction=instruction)


def is_task_dir(path: Path) -> bool:
    return (path / "task.toml").is_file()


def discover_tasks(*roots: str | Path) -> list[Path]:
    """Task directories under each root: the root itself if it is one, else its children.

    Sorted by task id; a root that is neither raises :class:`TaskLoadError`.
    """
    found: dict[str, Path] = {}
    for raw in roots:
        root = Path(raw).resolve()
        if is_task_dir(root):
            candidates = [root]
        elif root.is_dir():
            candidates = [p for p in root.iterdir() if p.is_dir() and is_task_dir(p)]
        else:
            raise TaskLoadError(root, "no such directory",
                                fix="pass a task dir or a folder of them")
        for path in candidates:
            if path.name in found and found[path.name] != path:
                raise TaskLoadError(
                    path, f"duplicate task id {path.name!r} (also {found[path.name]})",
                    fix="task ids must be unique: rename one directory",
                )
            found[path.name] = path
    return [found[k] for k in sorted(found)]

"""The CLI answers at once: listing commands imports none of them; each loads when used."""

from __future__ import annotations

import subprocess
import sys

import pytest

from termgrade.cli.app import COMMANDS, load_group

HEAVY = ("pandas", "datasets", "huggingface_hub", "scipy", "datasketch", "docker", "pyarrow")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_listed_summary_is_the_commands_own_first_help_line(name: str) -> None:
    module, summary = COMMANDS[name]
    command = load_group(module).commands[name]
    first = " ".join((command.help or "").strip().splitlines()[0].split())
    assert summary == first, f"update COMMANDS[{name!r}] in termgrade/cli/app.py"


def test_root_help_imports_no_command_module() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from termgrade.cli.app import app\n"
        "result = CliRunner().invoke(app, ['--help'])\n"
        "assert result.exit_code == 0, result.output\n"
        "assert 'materialize' in result.output\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "cli = [m for m in sys.modules\n"
        "       if m.startswith('termgrade.cli.') and m != 'termgrade.cli.app']\n"
        "print(heavy, cli)\n"
        "assert not heavy and not cli\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_command_loads_only_its_module() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from termgrade.cli.app import app\n"
        "result = CliRunner().invoke(app, ['schemas', '--help'])\n"
        "assert result.exit_code == 0, result.output\n"
        "cli = sorted(m for m in sys.modules if m.startswith('termgrade.cli.'))\n"
        "assert cli == ['termgrade.cli.app', 'termgrade.cli.schemas'], cli\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_version_prints_the_installed_number_and_loads_no_command() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from termgrade.cli.app import app\n"
        "from termgrade.core.version import __version__\n"
        "result = CliRunner().invoke(app, ['--version'])\n"
        "assert result.exit_code == 0, result.output\n"
        "assert result.output == f'termgrade {__version__}\\n', result.output\n"
        "cli = [m for m in sys.modules\n"
        "       if m.startswith('termgrade.cli.') and m != 'termgrade.cli.app']\n"
        "assert not cli, cli\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr

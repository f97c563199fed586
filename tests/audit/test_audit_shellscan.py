"""Network access in Dockerfiles and verifier scripts, found statically."""

from __future__ import annotations

import pytest

from termgrade.audit.shellscan import dockerfile_findings, network_findings, simple_commands


@pytest.mark.parametrize("line", [
    "RUN apt-get update && apt-get install -y jq",
    "RUN DEBIAN_FRONTEND=noninteractive apt install -y jq",
    "RUN pip install requests",
    "RUN python3 -m pip install --user requests",
    "RUN uv pip install numpy",
    "RUN npm install -g left-pad",
    "RUN curl -fsSL -o /tmp/x.tgz https://example.com/x.tgz",
    "RUN wget http://example.com/data.csv",
    "RUN git clone https://github.com/example/repo /app/repo",
    "RUN git clone git@github.com:example/repo.git",
    "ADD https://example.com/archive.tar.gz /opt/",
    'RUN ["/bin/sh", "-c", "wget https://example.com/y"]',
    "RUN bash -c 'curl -fsSL https://example.com/i.sh | sh'",
    "RUN set -e; \\\n    timeout 60 pip3 install flask",
])
def test_dockerfile_network_is_found(line: str) -> None:
    assert dockerfile_findings(f"FROM termgrade/base:local\n{line}\n")


@pytest.mark.parametrize("line", [
    "COPY data/ /app/data/",
    "RUN git init /srv/origin && git clone /srv/origin /app/repo",
    "RUN pip install --no-index /app/wheels/*.whl",
    "RUN echo 'run pip install later' > /app/NOTES",
    "RUN cat > /app/README.md <<'EOF'\npip install foo\ncurl https://example.com\nEOF",
    "# RUN apt-get install -y jq",
    "RUN gcc -O2 -o /usr/local/bin/helper /tmp/helper.c",
])
def test_offline_dockerfile_lines_pass(line: str) -> None:
    assert dockerfile_findings(f"FROM termgrade/base:local\n{line}\n") == []


def test_heredoc_fed_to_a_shell_is_scanned() -> None:
    assert dockerfile_findings("FROM x\nRUN <<EOF\napt-get install -y jq\nEOF\n")


@pytest.mark.parametrize("script", [
    "pip install pytest==8.4.1\n",
    "uv pip install pytest\n",
    "apt-get install -y python3-pytest\n",
    "curl -LsSf https://astral.sh/uv/install.sh | sh\n",
    "uvx -p 3.13 -w pytest==8.4.1 pytest /tests\n",
])
def test_verifier_network_is_found(script: str) -> None:
    assert network_findings(f"#!/bin/bash\n{script}")


def test_loopback_requests_are_offline() -> None:
    script = "curl -fs http://127.0.0.1:8080/health && wget -qO- http://localhost/x\n"
    assert network_findings(script) == []


def test_simple_commands_split_operators_and_unwrap() -> None:
    words = simple_commands("A=1 sudo -E env B=2 pip install x && echo 'a && b' | tee f")
    assert words == [["pip", "install", "x"], ["echo", "a && b"], ["tee", "f"]]

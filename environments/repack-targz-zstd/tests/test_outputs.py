import gzip
import hashlib
import io
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

SRC = Path("/app/archives")
OUT = Path("/app/repacked")
GOOD = {
    "website-2024-05.tar.gz": "website-2024-05.tar.zst",
    "photos 2023.tar.gz": "photos 2023.tar.zst",
    "configs.tgz": "configs.tar.zst",
}
ORIGINALS = {
    "configs.tgz": "4670f50bb2873b8ae79966c64260c9c77d59b67f7c981a34793d41f7532aa26a",
    "db-dump.tar.gz": "bf2be047fac041ad0afbfed1231849702e93a457775fb0de728623d6feeee980",
    "logs-2024.tar.gz": "fc9cef47f0cf4cfd3c96cc7b3d7ffef313987d192c4f7d9d7126f5a4183385b8",
    "notes.txt": "0f0875ce665d4a695f202e1282ad90748a214986a717a2b59cb31651d6bfd499",
    "photos 2023.tar.gz": "23e7ff2f1eb3480c6841fb99b1671551a474f2fc8b1a4092a822e97c614e3d1f",
    "website-2024-05.tar.gz": "c8dddb71e7b292b720d6cbbb7b6ffaba161c1897be92cad43add1c03d343a633",
}


def zstd_decompress(path):
    out = subprocess.run(["zstd", "-dc", "--", str(path)], capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def test_output_directory_has_exactly_expected_files():
    assert sorted(os.listdir(OUT)) == sorted([*GOOD.values(), "SHA256SUMS", "FAILED"])


@pytest.mark.parametrize("src, dst", sorted(GOOD.items()))
def test_tar_stream_is_byte_identical(src, dst):
    original = gzip.decompress((SRC / src).read_bytes())
    assert zstd_decompress(OUT / dst) == original


@pytest.mark.parametrize("dst", sorted(GOOD.values()))
def test_output_is_zstd_with_checksum(dst):
    data = (OUT / dst).read_bytes()
    assert data[:4] == b"\x28\xb5\x2f\xfd", "not a zstd frame"
    descriptor = data[4]
    assert descriptor & 0x04, "frame has no content checksum"
    test = subprocess.run(["zstd", "-t", "-q", "--", str(OUT / dst)], capture_output=True, timeout=60)
    assert test.returncode == 0, test.stderr


def test_metadata_survives_in_website_archive():
    data = zstd_decompress(OUT / "website-2024-05.tar.zst")
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert members["site/latest"].issym() and members["site/latest"].linkname == "index.html"
    assert members["site/deploy.sh"].mode == 0o755
    assert members["site/assets/app.js"].mtime == 1700003600
    assert members["site/index.html"].uname == "www"
    assert "site/caf\u00e9/menu.txt" in members


def test_gnu_format_tgz_converted():
    data = zstd_decompress(OUT / "configs.tar.zst")
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        names = tar.getnames()
    assert names == ["etc/nginx.conf", "etc/app.ini", "etc/crontab"]


def test_failed_lists_damaged_inputs_sorted():
    assert (OUT / "FAILED").read_text() == "db-dump.tar.gz\nlogs-2024.tar.gz\n"


def test_no_output_for_damaged_inputs():
    names = os.listdir(OUT)
    assert "FAILED" in names
    assert not any(n.startswith(("db-dump", "logs-2024")) for n in names)


def test_sums_file_format_and_order():
    lines = (OUT / "SHA256SUMS").read_text().splitlines()
    names = [line.split("  ", 1)[1] for line in lines]
    assert names == sorted(GOOD.values(), key=lambda n: n.encode())
    for line in lines:
        digest, name = line.split("  ", 1)
        assert len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)
        assert "/" not in name


def test_sums_match_files():
    for line in (OUT / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split("  ", 1)
        assert sha256((OUT / name).read_bytes()) == digest, name
    check = subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=OUT,
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr


def test_originals_untouched():
    assert (OUT / "SHA256SUMS").exists()
    assert sorted(os.listdir(SRC)) == sorted(ORIGINALS)
    for name, digest in ORIGINALS.items():
        assert sha256((SRC / name).read_bytes()) == digest, name


def test_notes_file_not_converted():
    assert (OUT / "FAILED").exists()
    assert not any(n.startswith("notes") for n in os.listdir(OUT))
    assert "notes.txt" not in (OUT / "FAILED").read_text()


def test_space_in_name_handled():
    path = OUT / "photos 2023.tar.zst"
    assert path.is_file()
    with tarfile.open(fileobj=io.BytesIO(zstd_decompress(path))) as tar:
        assert len([m for m in tar.getmembers() if m.isfile()]) == 6


def test_photos_member_metadata_preserved():
    data = zstd_decompress(OUT / "photos 2023.tar.zst")
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        files = [m for m in tar.getmembers() if m.isfile()]
    assert [m.name for m in files] == [f"photos 2023/IMG_{i:04d}.raw" for i in range(6)]
    assert {(m.mode, m.uname, m.uid) for m in files} == {(0o600, "alice", 1000)}
    assert [m.mtime for m in files] == [1672531200 + i * 86400 for i in range(6)]


def test_outputs_are_actually_compressed():
    for src, dst in GOOD.items():
        raw = gzip.decompress((SRC / src).read_bytes())
        assert (OUT / dst).stat().st_size < len(raw), dst

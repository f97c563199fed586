import hashlib
import os
import subprocess
from pathlib import Path

import pytest

APP = Path("/app")
ARCHIVE = APP / "dataset.tar.xz"
DATASET = APP / "dataset"
REPORT = APP / "transfer-report.txt"
ARCHIVE_SHA = "72bec4089b5db56217d5e86186c408f921359c5ee2d596589ef4f2c8b801650f"
TREE_DIGEST = "933e7b8adcecb64ff33408038ea7514ed3982cad6a4afddf7348b56227fce74c"
REPLACED = {3, 5, 6}
INPUTS = {
    "transfer/MANIFEST.sha256": "5787665bdfd843adef88655860d246469be281a25c6010008ff0ecfbb42f46b5",
    "transfer/dataset.tar.xz.part00": "5be0a52faa56aeabe831ee3f5547000247ea40a8c7f5cbaab239eaa0328910b4",
    "transfer/dataset.tar.xz.part01": "3e53bd17bbee372799d75840f496d2ba390cfdaf4d9a17e3d300b2b791351bec",
    "transfer/dataset.tar.xz.part02": "4bddfd0d8f7e764ca967dbe4479443c091724ec885560b2b8c18a00affdf3f72",
    "transfer/dataset.tar.xz.part03": "782dde0dee028ab1cb50b18a596df9028eafab10b90dea3dc025ceacbd1cb4e0",
    "transfer/dataset.tar.xz.part04": "d0556ca0c84012a3037fc3821a66beff54637f01dcc0b2f456cd1829553b99a7",
    "transfer/dataset.tar.xz.part06": "cc09465e554126653b7ad5dc301bc22f239f19c4bddae961b945ae6cf234796a",
    "transfer/dataset.tar.xz.part07": "be94a76391b9a1b388438851b7a90a92e1057e22be8accbfa0ad3850f9d2cc74",
    "transfer/dataset.tar.xz.part08": "40d4c4e3f2cc830500282b68c72735325cb4b1e4dfb9dc25a727b9a17b714162",
    "transfer/dataset.tar.xz.part09": "105271557270cdf944f7e328d9877ee0778dc37210b45622e9327369643b69c3",
    "mirror/dataset.tar.xz.part01": "37c98d0e333b5f69d72f6d880c95fdbe9cee8ca0b85ca5ea10381dc934f3f8b3",
    "mirror/dataset.tar.xz.part03": "0166a791a8c7c87644cbf16a2a8efaeb064ea4e3b161325e3db2b0b6989a980a",
    "mirror/dataset.tar.xz.part05": "32ff124b1528ae82fc0727828a8cae6467490841589aef809dc3a80575d7f941",
    "mirror/dataset.tar.xz.part05.partial": "24c2981a07d47f7c112300f59a0d7cd6e9f18161b6ee2d2728d8ff70ab91a5c1",
    "mirror/dataset.tar.xz.part06": "8ab2794d3a77d9b3b3121554242f25f13734803aa1f6cc10a410cb7e72d6864d",
}


def sha(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_archive_exists():
    assert ARCHIVE.is_file()


def test_archive_matches_manifest():
    assert sha(ARCHIVE) == ARCHIVE_SHA


def test_archive_passes_xz_integrity_check():
    out = subprocess.run(["xz", "-t", str(ARCHIVE)], capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr


def test_report_lines():
    want = [f"dataset.tar.xz.part{i:02d} {'replaced' if i in REPLACED else 'ok'}" for i in range(10)]
    assert REPORT.read_text().splitlines() == want


def test_report_ends_with_newline_and_nothing_else():
    text = REPORT.read_text()
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert len(text.splitlines()) == 10


def tree_digest(root):
    h = hashlib.sha256()
    n = 0
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_symlink():
            h.update(f"L {rel} {os.readlink(p)}\n".encode())
        elif p.is_dir():
            h.update(f"D {rel}\n".encode())
        else:
            n += 1
            h.update(f"F {rel} {p.stat().st_mode & 0o7777:o} ".encode()
                     + hashlib.sha256(p.read_bytes()).digest() + b"\n")
    return n, h.hexdigest()


def test_dataset_extracted_completely():
    assert tree_digest(DATASET) == (82, TREE_DIGEST)


def test_readme_content():
    assert (DATASET / "README.txt").read_text() == "Sensor dataset v3\n40 images, 40 label files.\n"


@pytest.mark.parametrize("i", [0, 17, 39])
def test_image_and_label_present(i):
    assert (DATASET / "images" / f"img_{i:03d}.bin").stat().st_size == 9000
    assert len((DATASET / "labels" / f"img_{i:03d}.csv").read_text().splitlines()) == 30


def test_mtimes_preserved():
    assert (DATASET / "images" / "img_017.bin").stat().st_mtime == 1710000017
    assert (DATASET / "README.txt").stat().st_mtime == 1710000000


def test_executable_mode_preserved():
    assert (DATASET / "tools" / "convert.sh").stat().st_mode & 0o777 == 0o755


def test_symlink_preserved():
    link = DATASET / "LATEST"
    assert link.is_symlink() and os.readlink(link) == "README.txt"


def test_inputs_untouched():
    assert ARCHIVE.exists()
    present = sorted(f"{d}/{n}" for d in ("transfer", "mirror") for n in os.listdir(APP / d))
    assert present == sorted(INPUTS)
    for rel, digest in INPUTS.items():
        assert sha(APP / rel) == digest, rel


def test_app_holds_only_expected_entries():
    assert sorted(os.listdir(APP)) == ["dataset", "dataset.tar.xz", "mirror", "transfer",
                                       "transfer-report.txt"]


def test_archive_member_list():
    import lzma
    import tarfile
    with tarfile.open(fileobj=lzma.open(ARCHIVE)) as tar:
        names = tar.getnames()
    assert len(names) == 86
    assert names[:4] == ["dataset", "dataset/images", "dataset/labels", "dataset/README.txt"]
    assert names[-1] == "dataset/LATEST"


def test_no_stray_parts_left_behind():
    assert REPORT.exists()
    strays = [p for p in APP.rglob("*part*")
              if not p.relative_to(APP).parts[0] in ("transfer", "mirror")]
    assert strays == []

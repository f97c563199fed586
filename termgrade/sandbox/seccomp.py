"""The scoring container's seccomp profile: no process there may read or write another's
memory, or step out of the container's namespaces.

Docker's default profile allows ``ptrace`` (kernel >= 4.8) and refuses
``process_vm_readv``/``writev`` only to processes without ``CAP_SYS_PTRACE``; a task
container keeps no such capability, but ``ptrace`` itself needs none against a process
of the same user. The scoring container runs the verifier beside agent code, so it gets
this profile instead: everything a task container may do, except the calls below, which
fail with ``EPERM`` (``clone3`` with ``ENOSYS``, so libc falls back to ``clone``, whose
namespace flags are refused the same way).
"""

from __future__ import annotations

import json

DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_by_handle_at",
    "name_to_handle_at", "keyctl", "add_key", "request_key", "bpf", "perf_event_open",
    "userfaultfd", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "iopl", "ioperm", "swapon", "swapoff", "reboot", "syslog",
    "acct", "quotactl", "lookup_dcookie", "fanotify_init", "personality",
)
EPERM, ENOSYS = 1, 38
CLONE_NAMESPACES = 0x7E020000
"""CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET."""


def scoring_profile() -> str:
    """The profile as the engine's API takes it (JSON text)."""
    rules: list[dict[str, object]] = [
        {"names": list(DENIED), "action": "SCMP_ACT_ERRNO", "errnoRet": EPERM},
        {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": ENOSYS},
    ]
    # One rule per namespace flag: (flags & bit) == bit. Rules of one call are OR-ed.
    rules += [{"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": EPERM,
               "args": [{"index": 0, "value": bit, "valueTwo": bit,
                         "op": "SCMP_CMP_MASKED_EQ"}]}
              for bit in (1 << n for n in range(32)) if bit & CLONE_NAMESPACES]
    return json.dumps({"defaultAction": "SCMP_ACT_ALLOW",
                       "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86",
                                         "SCMP_ARCH_X32", "SCMP_ARCH_AARCH64"],
                       "syscalls": rules})

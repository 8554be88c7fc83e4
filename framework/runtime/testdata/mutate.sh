#!/usr/bin/env bash
# Mutation check of TestPropertyOracleGates (issue 29): each mutation below
# breaks the "can it ever run" analysis, the gates or exclusive sizing in
# a copy of the tree; the property must fail on every one. Run from the
# repository root: framework/runtime/testdata/mutate.sh
# It prints one line per mutation, "caught" or "MISSED", and exits 1 if
# any was missed. Takes about a minute.
set -euo pipefail
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# name | file | perl substitution (must change the file)
mutations=(
  "joint: a term a host cannot serve takes its members|framework/runtime/joint.go|s/\tif each <= 0 \{\n\t\treturn\n\t\}\n//"
  "joint: the terms-together check skipped|framework/runtime/never.go|s/if joint && !noMatch \{/if false \&\& joint \&\& !noMatch {/"
  "span[hosts=1]: a host as large as the term refused|framework/runtime/never.go|s/if need > largest \{/if need >= largest {/"
  "ptile: one full host too few accepted|framework/runtime/never.go|s/if full < fullNeed \|\|/if full+1 < fullNeed ||/"
  "no span: the total off by one|framework/runtime/never.go|s/\t\tif need > total \{/\t\tif need > total+1 {/"
  "gates: a stuck job bypasses them|framework/runtime/gates.go|s/case s.runner.NeverFits\(j\) != \"\":/case s.runner.NeverFits(j) != \"\" || s.runner.IsStuckForMutation(j):/"
  "exclusive: plans sized on free slots alone|framework/plugins/exclusive/exclusive.go|s/\t_ framework.Bounder    = \(\*Plugin\)\(nil\)\n//; s/func \(p \*Plugin\) HostBound\(/func (p *Plugin) hostBound(/"
)

for m in "${mutations[@]}"; do
  IFS='|' read -r name file subst <<<"$m"
  rm -rf "$tmp/tree" && mkdir "$tmp/tree"
  (cd "$root" && git ls-files -z | xargs -0 cp --parents -t "$tmp/tree")
  # Files not yet committed are copied too.
  (cd "$root" && git ls-files -z --others --exclude-standard | xargs -0 -r cp --parents -t "$tmp/tree")
  if [[ "$subst" == *IsStuckForMutation* ]]; then
    printf '\npackage runtime\n\nimport "github.com/xce-sched/xce/framework"\n\nfunc (r *Runner) IsStuckForMutation(j *framework.Job) bool { return r.isStuck(j) }\n' >"$tmp/tree/framework/runtime/mutation_hook.go"
  fi
  before=$(sha1sum "$tmp/tree/$file")
  perl -0pi -e "$subst" "$tmp/tree/$file"
  if [ "$before" = "$(sha1sum "$tmp/tree/$file")" ]; then
    echo "mutation did not apply: $name" >&2
    exit 2
  fi
  if (cd "$tmp/tree" && go test -count=1 -run "TestPropertyOracle(Gates|Placement)" ./framework/runtime/ >"$tmp/out" 2>&1); then
    echo "MISSED  $name"
    missed=1
  else
    echo "caught  $name"
  fi
done
exit "${missed:-0}"

#!/usr/bin/env bash
# Regenerates what the charts' annotated values.yaml files generate:
#   - README.md of herald-lib, push-platform, provider-sandbox and the service charts (helm-docs,
#     from the `# --` comments; templates: charts/<chart>/README.md.gotmpl, charts/service-README.md.gotmpl);
#   - values.schema.json of push-platform, provider-sandbox and the service charts
#     (scripts/k8s/chart_schema.py, herald-lib's shared part composed into the charts importing it).
#
#   scripts/k8s/chart-docs.sh [CHARTS_DIR]    (default: charts/; tests/charts/test_chart_docs.py
#                                              runs it on a copy and compares)
#   scripts/k8s/chart-docs.sh --tool          only builds helm-docs (scripts/k8s/tools.sh) and prints its path
#
# helm-docs is built once from the Go module proxy into the test control plane's tool cache
# (scripts/k8s/testbed.sh tool); PYTHON (default python3) needs PyYAML.
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

HELM_DOCS_VERSION=1.14.2
SERVICE_CHARTS=(dispatcher gateway connection-manager)
K8S="${HERALD_ROOT}/scripts/k8s"

helm_docs="$(bash "${K8S}/testbed.sh" tool helm-docs "github.com/norwoodj/helm-docs/cmd/helm-docs@v${HELM_DOCS_VERSION}")"
if [[ "${1:-}" == --tool ]]; then
  printf '%s\n' "$helm_docs"
  exit 0
fi
charts="$(cd "${1:-${HERALD_ROOT}/charts}" && pwd -P)"
python="${PYTHON:-python3}"

services="$(IFS=,; echo "${SERVICE_CHARTS[*]}")"
# Values in file order: each file groups them as a reader meets them.
(
  cd "$charts"
  "$helm_docs" --log-level warning --sort-values-order file --chart-search-root . \
    --chart-to-generate herald-lib,push-platform,provider-sandbox
  "$helm_docs" --log-level warning --sort-values-order file --chart-search-root . \
    --chart-to-generate "$services" --template-files ../service-README.md.gotmpl
)
for chart in push-platform provider-sandbox "${SERVICE_CHARTS[@]}"; do
  "$python" "${K8S}/chart_schema.py" "${charts}/${chart}"
done

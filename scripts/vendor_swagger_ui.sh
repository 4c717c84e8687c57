#!/usr/bin/env bash
# Vendors the files of the API docs page (GET /docs) from the npm package
# swagger-ui-dist into serve/docs/swagger-ui/, with their sha256 in
# serve/docs/swagger-ui/SHA256SUMS (checked by serve's tests against the
# embedded copies). The page never loads anything from a CDN: the files are
# in the binary. Run once per version bump; the result is committed.
#
# Usage: scripts/vendor_swagger_ui.sh [VERSION]   (default: the pinned one)
set -euo pipefail
VERSION=${1:-5.35.0}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST="$ROOT/serve/docs/swagger-ui"
FILES=(swagger-ui-bundle.js swagger-ui.css LICENSE)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --loglevel=error "swagger-ui-dist@$VERSION" >/dev/null)
tar -xzf "$tmp"/*.tgz -C "$tmp"
mkdir -p "$DEST"
for f in "${FILES[@]}"; do
  cp "$tmp/package/$f" "$DEST/$f"
done
(cd "$DEST" && sha256sum "${FILES[@]}" >SHA256SUMS && echo "swagger-ui-dist@$VERSION" >VERSION)
echo "vendored swagger-ui-dist@$VERSION into $DEST:" >&2
cat "$DEST/SHA256SUMS" >&2

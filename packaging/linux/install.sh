#!/bin/sh
# Install a built bundle for the current user: the app, a `cryptobench` launcher, the
# desktop entry and the icon at every size, under PREFIX (default ~/.local).
#
#   sh packaging/linux/install.sh [BUNDLE_DIR]          (default: dist/cryptobench)
#   sh packaging/linux/install.sh --uninstall
#   PREFIX=/opt/cryptobench-root sh packaging/linux/install.sh
set -eu

here=$(cd "$(dirname "$0")" && pwd)
prefix=${PREFIX:-$HOME/.local}
app_dir=$prefix/lib/cryptobench
launcher=$prefix/bin/cryptobench
entry=$prefix/share/applications/cryptobench.desktop
icons=$prefix/share/icons/hicolor

refresh_caches() {
    # Menus and icon caches pick the change up at once where these tools exist.
    command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$prefix/share/applications" || true
    command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$icons" || true
}

if [ "${1:-}" = "--uninstall" ]; then
    rm -rf "$app_dir" "$launcher" "$entry"
    rm -f "$icons"/*/apps/cryptobench.png "$icons"/scalable/apps/cryptobench.svg
    refresh_caches
    echo "removed CryptoBench from $prefix"
    exit 0
fi

bundle=${1:-$here/../../dist/cryptobench}
if [ ! -x "$bundle/cryptobench" ]; then
    echo "install.sh: error: $bundle/cryptobench not found; run \`make package\` first" >&2
    exit 2
fi
bundle=$(cd "$bundle" && pwd)
icon_src=$bundle/_internal/resources/icons

# Copy beside the old install, then swap: an interrupted copy never leaves half an app.
mkdir -p "$prefix/lib" "$prefix/bin" "$prefix/share/applications"
staging=$(mktemp -d "$prefix/lib/.cryptobench-new.XXXXXX")
cp -a "$bundle/." "$staging/"
rm -rf "$app_dir.old"
[ -e "$app_dir" ] && mv "$app_dir" "$app_dir.old"
mv "$staging" "$app_dir"
rm -rf "$app_dir.old"
ln -sfn "$app_dir/cryptobench" "$launcher"

for size in 16 22 24 32 48 64 128 256 512; do
    mkdir -p "$icons/${size}x${size}/apps"
    cp "$icon_src/cryptobench-$size.png" "$icons/${size}x${size}/apps/cryptobench.png"
done
mkdir -p "$icons/scalable/apps"
cp "$icon_src/cryptobench.svg" "$icons/scalable/apps/cryptobench.svg"

# The menu's session may not have ~/.local/bin on PATH: point Exec at the launcher itself.
sed -e "s|^Exec=cryptobench|Exec=$launcher|" -e "s|^TryExec=cryptobench|TryExec=$launcher|" \
    "$here/cryptobench.desktop" > "$entry.tmp"
mv "$entry.tmp" "$entry"
refresh_caches
echo "installed CryptoBench to $app_dir; launcher $launcher; menu entry $entry"

// Rapport: packs (`Options::area_packs`). The first split module a page loads
// fetches one file with every module it needs, which compresses far better
// than the modules one by one; later splits fetch the modules still missing.
const packedModules = new Map();
let packFetched = false;
function takePacked(file) {
    const bytes = packedModules.get(file);
    packedModules.delete(file);
    return bytes;
}
function unpack(buffer, count) {
    const view = new DataView(buffer);
    const modules = [];
    let offset = 0;
    while (offset + 4 <= buffer.byteLength) {
        const length = view.getUint32(offset, true);
        offset += 4;
        modules.push(buffer.slice(offset, offset + length));
        offset += length;
    }
    if (offset !== buffer.byteLength || modules.length !== count) throw new Error("malformed pack");
    return modules;
}
function packFirst(packFile, files, load) {
    return () => {
        if (!packFetched) {
            packFetched = true;
            const modules = fetch(new URL(packFile, import.meta.url))
                .then(r => r.ok ? r.arrayBuffer() : Promise.reject(new Error(`${packFile}: ${r.status}`)))
                .then(buffer => unpack(buffer, files.length));
            // A failed pack fails the loads that wait on it; their retries
            // fetch the modules one by one.
            modules.catch(() => {});
            files.forEach((file, i) => packedModules.set(file, modules.then(m => m[i])));
        }
        return load();
    };
}

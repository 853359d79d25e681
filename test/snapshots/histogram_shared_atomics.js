"use strict";
// histogram_shared_atomics: simulator code, per block, one loop over its threads between barriers
const { atomic, bindArray, oob, blockRange } = rt;
const atomic_add_uint32_shared = atomic("add", "uint32", "shared");
const atomic_add_uint32_global = atomic("add", "uint32", "global");
return function kernel_histogram_shared_atomics(L, args) {
  const data = bindArray(args[0], "data", "uint8", 1, "C");
  let data$v = data.v, data$n0 = data.shape[0], data$size = data.size;
  const bins = bindArray(args[1], "bins", "uint32", 1, "C");
  let bins$v = bins.v, bins$n0 = bins.shape[0], bins$size = bins.size;
  const [gx, gy, gz] = L.grid, [nx, ny, nz] = L.block;
  let t, i, $0, $1, $2;
  const ph$nt = nx * ny * nz;
  const [first, end] = blockRange(L);
  for (let b = first; b < end; b++) {
    const bx = b % gx, by = Math.floor(b / gx) % gy, bz = Math.floor(b / (gx * gy));
    const s$v = new Uint32Array(256);
    for (let tz = 0, ph$t = 0; tz < nz; tz++) for (let ty = 0; ty < ny; ty++) thread: for (let tx = 0; tx < nx; tx++, ph$t++) {
      t = tx;
      s$v[(t)] = 0;
    }
    for (let tz = 0, ph$t = 0; tz < nz; tz++) for (let ty = 0; ty < ny; ty++) thread: for (let tx = 0; tx < nx; tx++, ph$t++) {
      i = ((((Math.imul(bx, nx)) | 0) + tx) | 0);
      L_loop: while ((i < data$n0)) {
        L_loop_body: {
          atomic_add_uint32_shared(s$v, ($0 = ((data$v[($1 = i) >>> 0 < data$n0 ? $1 : oob("data", [$1], [data$n0], sites[0], tx, ty, tz, bx, by, bz)]) | 0)) >>> 0 < 256 ? $0 : oob("s", [$0], [256], sites[1], tx, ty, tz, bx, by, bz), 1);
        }
        i = ((i + ((Math.imul(nx, gx)) | 0)) | 0);
      }
    }
    for (let tz = 0, ph$t = 0; tz < nz; tz++) for (let ty = 0; ty < ny; ty++) thread: for (let tx = 0; tx < nx; tx++, ph$t++) {
      t = tx;
      atomic_add_uint32_global(bins$v, ($2 = t) >>> 0 < bins$n0 ? $2 : oob("bins", [$2], [bins$n0], sites[2], tx, ty, tz, bx, by, bz), s$v[(t)]);
    }
  }
};

"use strict";
// stencil: simulator code, one loop over all threads
const { bindArray, oob, blockRange } = rt;
return function kernel_stencil(L, args) {
  const a = bindArray(args[0], "a", "float32", 2, "C");
  let a$v = a.v, a$n0 = a.shape[0], a$s0 = a.strides[0], a$n1 = a.shape[1], a$size = a.size;
  const out = bindArray(args[1], "out", "float32", 2, "C");
  let out$v = out.v, out$n0 = out.shape[0], out$s0 = out.strides[0], out$n1 = out.shape[1], out$size = out.size;
  const [gx, gy, gz] = L.grid, [nx, ny, nz] = L.block;
  let tuple, x, y, ny_1, nx_1, $0, $1, $2, $3, $4, $5, $6, $7;
  const [first, end] = blockRange(L);
  for (let b = first; b < end; b++) {
    const bx = b % gx, by = Math.floor(b / gx) % gy, bz = Math.floor(b / (gx * gy));
    for (let tz = 0; tz < nz; tz++) for (let ty = 0; ty < ny; ty++) thread: for (let tx = 0; tx < nx; tx++) {
        tuple = [((((Math.imul(bx, nx)) | 0) + tx) | 0), ((((Math.imul(by, ny)) | 0) + ty) | 0)];
        x = tuple[0];
        y = tuple[1];
        ny_1 = a$n0;
        nx_1 = a$n1;
        if (((x < nx_1) && (y < ny_1))) {
          if (((((x === 0) || (y === 0)) || (x === ((nx_1 - 1) | 0))) || (y === ((ny_1 - 1) | 0)))) {
            out$v[(y) * out$s0 + (x)] = a$v[(y) * a$s0 + (x)];
          } else {
            out$v[(y) * out$s0 + (x)] = Math.fround(0.20000000298023224 * Math.fround(Math.fround(Math.fround(Math.fround(a$v[(y) * a$s0 + (x)] + a$v[($0 = ((y - 1) | 0), $1 = x, $0 >>> 0 < a$n0) ? $0 * a$s0 + $1 : oob("a", [$0, $1], [a$n0, a$n1], sites[0], tx, ty, tz, bx, by, bz)]) + a$v[($2 = ((y + 1) | 0), $3 = x, $2 >>> 0 < a$n0) ? $2 * a$s0 + $3 : oob("a", [$2, $3], [a$n0, a$n1], sites[1], tx, ty, tz, bx, by, bz)]) + a$v[($4 = y, $5 = ((x - 1) | 0), $5 >>> 0 < a$n1) ? $4 * a$s0 + $5 : oob("a", [$4, $5], [a$n0, a$n1], sites[2], tx, ty, tz, bx, by, bz)]) + a$v[($6 = y, $7 = ((x + 1) | 0), $7 >>> 0 < a$n1) ? $6 * a$s0 + $7 : oob("a", [$6, $7], [a$n0, a$n1], sites[3], tx, ty, tz, bx, by, bz)]));
          }
        }
    }
  }
};

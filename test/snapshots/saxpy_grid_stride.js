"use strict";
// saxpy_grid_stride: simulator code, one loop over all threads
const { bindArray, scalarArg, oob, blockRange, fma32 } = rt;
return function kernel_saxpy_grid_stride(L, args) {
  let alpha = scalarArg(args[0], "alpha", "float32");
  const x = bindArray(args[1], "x", "float32", 1, "C");
  let x$v = x.v, x$n0 = x.shape[0], x$size = x.size;
  const y = bindArray(args[2], "y", "float32", 1, "C");
  let y$v = y.v, y$n0 = y.shape[0], y$size = y.size;
  const [gx, gy, gz] = L.grid, [nx, ny, nz] = L.block;
  let i, $0, $1, $2;
  const [first, end] = blockRange(L);
  for (let b = first; b < end; b++) {
    const bx = b % gx, by = Math.floor(b / gx) % gy, bz = Math.floor(b / (gx * gy));
    for (let tz = 0; tz < nz; tz++) for (let ty = 0; ty < ny; ty++) thread: for (let tx = 0; tx < nx; tx++) {
        i = ((((Math.imul(bx, nx)) | 0) + tx) | 0);
        L_loop: while ((i < y$n0)) {
          L_loop_body: {
            y$v[($0 = i) >>> 0 < y$n0 ? $0 : oob("y", [$0], [y$n0], sites[0], tx, ty, tz, bx, by, bz)] = fma32(alpha, x$v[($1 = i) >>> 0 < x$n0 ? $1 : oob("x", [$1], [x$n0], sites[1], tx, ty, tz, bx, by, bz)], y$v[($2 = i) >>> 0 < y$n0 ? $2 : oob("y", [$2], [y$n0], sites[2], tx, ty, tz, bx, by, bz)]);
          }
          i = ((i + ((Math.imul(nx, gx)) | 0)) | 0);
        }
    }
  }
};

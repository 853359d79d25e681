"use strict";
// vadd: simulator code, one loop over all threads
const { bindArray, blockRange } = rt;
return function kernel_vadd(L, args) {
  const a = bindArray(args[0], "a", "float32", 1, "C");
  let a$v = a.v, a$n0 = a.shape[0], a$size = a.size;
  const b_1 = bindArray(args[1], "b", "float32", 1, "C");
  let b_1$v = b_1.v, b_1$n0 = b_1.shape[0], b_1$size = b_1.size;
  const c = bindArray(args[2], "c", "float32", 1, "C");
  let c$v = c.v, c$n0 = c.shape[0], c$size = c.size;
  const [gx, gy, gz] = L.grid, [nx, ny, nz] = L.block;
  let i;
  const [first, end] = blockRange(L);
  for (let b = first; b < end; b++) {
    const bx = b % gx, by = Math.floor(b / gx) % gy, bz = Math.floor(b / (gx * gy));
    for (let tz = 0; tz < nz; tz++) for (let ty = 0; ty < ny; ty++) thread: for (let tx = 0; tx < nx; tx++) {
        i = ((((Math.imul(bx, nx)) | 0) + tx) | 0);
        if ((i < c$n0)) {
          c$v[(i)] = Math.fround(a$v[(i)] + b_1$v[(i)]);
        }
    }
  }
};

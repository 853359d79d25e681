"use strict";
// matmul_naive: simulator code, one loop over all threads
const { bindArray, blockRange, fma32 } = rt;
return function kernel_matmul_naive(L, args) {
  const A = bindArray(args[0], "A", "float32", 2, "C");
  let A$v = A.v, A$n0 = A.shape[0], A$s0 = A.strides[0], A$n1 = A.shape[1], A$size = A.size;
  const B = bindArray(args[1], "B", "float32", 2, "C");
  let B$v = B.v, B$n0 = B.shape[0], B$s0 = B.strides[0], B$n1 = B.shape[1], B$size = B.size;
  const C = bindArray(args[2], "C", "float32", 2, "C");
  let C$v = C.v, C$n0 = C.shape[0], C$s0 = C.strides[0], C$n1 = C.shape[1], C$size = C.size;
  const [gx, gy, gz] = L.grid, [nx, ny, nz] = L.block;
  let tuple, x, y, s, k;
  const [first, end] = blockRange(L);
  for (let b = first; b < end; b++) {
    const bx = b % gx, by = Math.floor(b / gx) % gy, bz = Math.floor(b / (gx * gy));
    for (let tz = 0; tz < nz; tz++) for (let ty = 0; ty < ny; ty++) thread: for (let tx = 0; tx < nx; tx++) {
        tuple = [((((Math.imul(bx, nx)) | 0) + tx) | 0), ((((Math.imul(by, ny)) | 0) + ty) | 0)];
        x = tuple[0];
        y = tuple[1];
        if (((y < C$n0) && (x < C$n1))) {
          s = 0;
          k = 0;
          L_loop: while ((k < A$n1)) {
            L_loop_body: {
              s = fma32(A$v[(y) * A$s0 + (k)], B$v[(k) * B$s0 + (x)], s);
            }
            k = ((k + 1) | 0);
          }
          C$v[(y) * C$s0 + (x)] = s;
        }
    }
  }
};

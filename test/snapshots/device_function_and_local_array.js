"use strict";
// device_function_and_local_array: simulator code, one loop over all threads
const { bindArray, blockRange } = rt;
return function kernel_device_function_and_local_array(L, args) {
  const out = bindArray(args[0], "out", "int32", 1, "C");
  let out$v = out.v, out$n0 = out.shape[0], out$size = out.size;
  const [gx, gy, gz] = L.grid, [nx, ny, nz] = L.block;
  const acc$v = new Int32Array(4);
  let i, k, square_0_x, square_0__result;
  const [first, end] = blockRange(L);
  for (let b = first; b < end; b++) {
    const bx = b % gx, by = Math.floor(b / gx) % gy, bz = Math.floor(b / (gx * gy));
    for (let tz = 0; tz < nz; tz++) for (let ty = 0; ty < ny; ty++) thread: for (let tx = 0; tx < nx; tx++) {
        i = ((((Math.imul(bx, nx)) | 0) + tx) | 0);
        acc$v.fill(0);
        k = 0;
        L_loop: while ((k < 4)) {
          L_loop_body: {
            square_0_x = ((i + k) | 0);
            square_0__result = 0;
            square_0__result = ((Math.imul(square_0_x, square_0_x)) | 0);
            acc$v[(k)] = square_0__result;
          }
          k = ((k + 1) | 0);
        }
        if ((i < out$n0)) {
          out$v[(i)] = ((((((acc$v[(0)] + acc$v[(1)]) | 0) + acc$v[(2)]) | 0) + acc$v[(3)]) | 0);
        }
    }
  }
};

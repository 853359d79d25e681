"use strict";
// tuple_destructuring_loop: simulator code, one loop over all threads
const { bindArray, blockRange, fma64 } = rt;
return function kernel_tuple_destructuring_loop(L, args) {
  const out = bindArray(args[0], "out", "float64", 1, "C");
  let out$v = out.v, out$n0 = out.shape[0], out$size = out.size;
  const [gx, gy, gz] = L.grid, [nx, ny, nz] = L.block;
  let i, weights, s, w, w_1, w_2;
  const [first, end] = blockRange(L);
  for (let b = first; b < end; b++) {
    const bx = b % gx, by = Math.floor(b / gx) % gy, bz = Math.floor(b / (gx * gy));
    for (let tz = 0; tz < nz; tz++) for (let ty = 0; ty < ny; ty++) thread: for (let tx = 0; tx < nx; tx++) {
        i = ((((Math.imul(bx, nx)) | 0) + tx) | 0);
        weights = [0.25, 0.5, 0.25];
        s = 0;
        L_loop: {
          L_item: {
            w = weights[0];
            s = fma64(w, ((i + 0) | 0), s);
          }
          L_item_1: {
            w_1 = weights[1];
            s = fma64(w_1, ((i + 1) | 0), s);
          }
          L_item_2: {
            w_2 = weights[2];
            s = fma64(w_2, ((i + 2) | 0), s);
          }
        }
        if ((i < out$n0)) {
          out$v[(i)] = s;
        }
    }
  }
};

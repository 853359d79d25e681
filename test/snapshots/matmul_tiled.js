"use strict";
// matmul_tiled: simulator code, per block, one loop over its threads between barriers
const { bindArray, oob, divergentLoop, blockRange, fma32 } = rt;
return function kernel_matmul_tiled(L, args) {
  const A = bindArray(args[0], "A", "float32", 2, "C");
  let A$v = A.v, A$n0 = A.shape[0], A$s0 = A.strides[0], A$n1 = A.shape[1], A$size = A.size;
  const B = bindArray(args[1], "B", "float32", 2, "C");
  let B$v = B.v, B$n0 = B.shape[0], B$s0 = B.strides[0], B$n1 = B.shape[1], B$size = B.size;
  const C = bindArray(args[2], "C", "float32", 2, "C");
  let C$v = C.v, C$n0 = C.shape[0], C$s0 = C.strides[0], C$n1 = C.shape[1], C$size = C.size;
  const [gx, gy, gz] = L.grid, [nx, ny, nz] = L.block;
  let tuple, x, y, tx_1, ty_1, tmp, i, j, $0, $1, $2, $3;
  const ph$nt = nx * ny * nz;
  const ph$l$x = new Int32Array(ph$nt);
  const ph$l$y = new Int32Array(ph$nt);
  const ph$l$tmp = new Float64Array(ph$nt);
  const ph$l$i = new Int32Array(ph$nt);
  let ph$a0;
  const [first, end] = blockRange(L);
  for (let b = first; b < end; b++) {
    const bx = b % gx, by = Math.floor(b / gx) % gy, bz = Math.floor(b / (gx * gy));
    const sA$v = new Float32Array(256);
    const sB$v = new Float32Array(256);
    ph$a0 = -1;
    for (let tz = 0, ph$t = 0; tz < nz; tz++) for (let ty = 0; ty < ny; ty++) thread: for (let tx = 0; tx < nx; tx++, ph$t++) {
      tuple = [((((Math.imul(bx, nx)) | 0) + tx) | 0), ((((Math.imul(by, ny)) | 0) + ty) | 0)];
      x = tuple[0];
      y = tuple[1];
      tx_1 = tx;
      ty_1 = ty;
      tmp = 0;
      i = 0;
      { const ph$v = (i < gx) ? 1 : 0;
        if (ph$a0 < 0) ph$a0 = ph$v; else if (ph$a0 !== ph$v) divergentLoop(sites[0], ph$v === 1, tx, ty, tz, bx, by, bz); }
      ph$l$x[ph$t] = x, ph$l$y[ph$t] = y, ph$l$tmp[ph$t] = tmp, ph$l$i[ph$t] = i;
    }
    while (ph$a0 === 1) {
      for (let tz = 0, ph$t = 0; tz < nz; tz++) for (let ty = 0; ty < ny; ty++) thread: for (let tx = 0; tx < nx; tx++, ph$t++) {
        y = ph$l$y[ph$t], i = ph$l$i[ph$t], x = ph$l$x[ph$t];
        ty_1 = ty;
        tx_1 = tx;
        sA$v[(ty_1) * 16 + (tx_1)] = 0;
        sB$v[(ty_1) * 16 + (tx_1)] = 0;
        if (((y < A$n0) && (((tx_1 + ((Math.imul(i, 16)) | 0)) | 0) < A$n1))) {
          sA$v[(ty_1) * 16 + (tx_1)] = A$v[($0 = y, $1 = ((tx_1 + ((Math.imul(i, 16)) | 0)) | 0), $1 >>> 0 < A$n1) ? $0 * A$s0 + $1 : oob("A", [$0, $1], [A$n0, A$n1], sites[1], tx, ty, tz, bx, by, bz)];
        }
        if (((x < B$n1) && (((ty_1 + ((Math.imul(i, 16)) | 0)) | 0) < B$n0))) {
          sB$v[(ty_1) * 16 + (tx_1)] = B$v[($2 = ((ty_1 + ((Math.imul(i, 16)) | 0)) | 0), $3 = x, $2 >>> 0 < B$n0) ? $2 * B$s0 + $3 : oob("B", [$2, $3], [B$n0, B$n1], sites[2], tx, ty, tz, bx, by, bz)];
        }
      }
      ph$a0 = -1;
      for (let tz = 0, ph$t = 0; tz < nz; tz++) for (let ty = 0; ty < ny; ty++) thread: for (let tx = 0; tx < nx; tx++, ph$t++) {
        tmp = ph$l$tmp[ph$t], i = ph$l$i[ph$t];
        ty_1 = ty;
        tx_1 = tx;
        j = 0;
        L_loop_1: while ((j < 16)) {
          L_loop_1_body: {
            tmp = fma32(sA$v[(ty_1) * 16 + (j)], sB$v[(j) * 16 + (tx_1)], tmp);
          }
          j = ((j + 1) | 0);
        }
        i = ((i + 1) | 0);
        { const ph$v = (i < gx) ? 1 : 0;
          if (ph$a0 < 0) ph$a0 = ph$v; else if (ph$a0 !== ph$v) divergentLoop(sites[3], ph$v === 1, tx, ty, tz, bx, by, bz); }
        ph$l$tmp[ph$t] = tmp, ph$l$i[ph$t] = i;
      }
    }
    for (let tz = 0, ph$t = 0; tz < nz; tz++) for (let ty = 0; ty < ny; ty++) thread: for (let tx = 0; tx < nx; tx++, ph$t++) {
      y = ph$l$y[ph$t], x = ph$l$x[ph$t], tmp = ph$l$tmp[ph$t];
      if (((y < C$n0) && (x < C$n1))) {
        C$v[(y) * C$s0 + (x)] = tmp;
      }
    }
  }
};

// Row softmax, one subgroup per row (bench/webgpu.ts `softmax`, bench/gpu.ts's with the subgroup's
// size for 32): each lane strides over the row, then max and sum by butterfly shuffles. The shuffles
// run under `row < rows`, as the kernel's do: a whole subgroup takes the same branch, which WGSL's
// uniformity analysis cannot see, hence the diagnostic.
enable subgroups;
diagnostic(off, subgroup_uniformity);

const BLOCK = 256u;

struct Dims { rows: u32, cols: u32 }

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(BLOCK)
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) group: vec3u,
        @builtin(subgroup_size) width: u32) {
  let row = group.x * (BLOCK / width) + t / width;
  let lane = t % width;
  if (row < dims.rows) {
    let base = row * dims.cols;
    var m = -0x1.fffffep+127f;  // the lowest f32: WGSL has no infinite constants
    for (var j = lane; j < dims.cols; j += width) {
      m = max(m, a[base + j]);
    }
    for (var o = width >> 1u; o > 0u; o >>= 1u) {
      m = max(m, subgroupShuffleXor(m, o));
    }
    var sum = 0.0;
    for (var j = lane; j < dims.cols; j += width) {
      sum += exp(a[base + j] - m);
    }
    for (var o = width >> 1u; o > 0u; o >>= 1u) {
      sum += subgroupShuffleXor(sum, o);
    }
    for (var j = lane; j < dims.cols; j += width) {
      out[base + j] = exp(a[base + j] - m) / sum;
    }
  }
}

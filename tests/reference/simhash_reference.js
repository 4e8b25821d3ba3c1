// The reference implementation of the SimHash specification this project follows, copied
// unchanged, plus a driver: reads a JSON array of cases {features, bits, seed} on stdin (features
// as a list of [key, weight] pairs, turned into an object exactly as a JS caller would build it)
// and writes a JSON array of fingerprints as lower-case hex strings.
function fnv1a(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function xorshift32(seed) {
  let s = seed >>> 0 || 1;
  return function next() {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s;
  };
}

function featureBits(feature, seed, b) {
  const rng = xorshift32(fnv1a(feature + ':' + seed));
  const bits = new Array(b);
  let word = 0, have = 0;
  for (let i = 0; i < b; i++) {
    if (have === 0) { word = rng(); have = 32; }
    bits[i] = word & 1;
    word >>>= 1; have--;
  }
  return bits;
}

function fingerprint(weightedVec, b, seed) {
  const acc = new Array(b).fill(0);
  for (const [feature, weight] of Object.entries(weightedVec)) {
    const bits = featureBits(feature, seed, b);
    for (let i = 0; i < b; i++) acc[i] += bits[i] ? weight : -weight;
  }
  let fp = 0n;
  for (let i = 0; i < b; i++) if (acc[i] > 0) fp |= (1n << BigInt(i));
  return fp;
}

const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  const cases = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const out = cases.map(({ features, bits, seed }) => {
    const vec = {};
    for (const [key, weight] of features) vec[key] = weight;
    return fingerprint(vec, bits, seed).toString(16);
  });
  process.stdout.write(JSON.stringify(out));
});

//! Experiment (issue 38): BookSim's one-round iSLIP switch allocation for an 8x8 network's
//! 5-port, 4-VC routers, decided in lanes and not on the same random router states:
//! - `scalar`: router by router with branches, as `BookSim::sa_fast` does (a lone asker, asking
//!   VCs alone at their input and output, else grant and accept over bit sets);
//! - `lanes`: 16 routers at once, one router a SIMD lane, every step taken for every lane
//!   (no branch on the traffic), compiled for AVX-512, as loops for the compiler to vectorise
//!   and in intrinsics.
//!
//! Checks that all decide the same winners, stalled outputs and pointers, and times them.
//! Run: `cargo run --release -- [asking VCs per router, default 1.6]`. See README.md.

use std::hint::black_box;
use std::time::Instant;

const P: usize = 5;
const V: usize = 4;
const N: usize = P * V;
const L: usize = 16;
const DEPTH: u8 = 8;

/// One router's switch-allocation inputs and pointers.
#[derive(Clone, Copy, Default, PartialEq, Debug)]
struct Router {
    sa: u32,
    op: [u8; N],
    ov: [u8; N],
    occ: [u8; N],
    gptr: [u8; P],
    aptr: [u8; P],
    rr: [u8; P],
}

/// 16 routers, field by field, a lane each.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Lanes {
    sa: [u32; L],
    op: [[u32; L]; N],
    ov: [[u32; L]; N],
    occ: [[u32; L]; N],
    gptr: [[u32; L]; P],
    aptr: [[u32; L]; P],
    rr: [[u32; L]; P],
}

fn after(i: usize, n: usize) -> u8 {
    let next = i + 1;
    (next & usize::from(next != n).wrapping_neg()) as u8
}

fn rr_pick(mask: u64, from: usize) -> usize {
    (from + mask.rotate_right(from as u32).trailing_zeros() as usize) & 63
}

fn bits(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let j = m.trailing_zeros() as usize;
            m &= m - 1;
            j
        })
    })
}

/// `sa_fast`'s decisions and `switch_fast`'s pointer moves: returns (winners, stalled outputs).
#[inline(never)]
fn scalar(r: &mut Router) -> (u32, u32) {
    let sa = u64::from(r.sa);
    if sa == 0 {
        return (0, 0);
    }
    let moves = |r: &mut Router, won: u64| {
        for j in bits(won) {
            let (p, c, o) = (j / V, j % V, r.op[j] as usize);
            r.gptr[o] = after(p, P);
            r.aptr[p] = after(o, P);
            r.rr[p] = after(c, V);
        }
    };
    if sa.is_power_of_two() {
        let j = sa.trailing_zeros() as usize;
        let k = r.op[j] as usize * V + r.ov[j] as usize;
        if r.occ[k] >= DEPTH {
            return (0, 1 << r.op[j]);
        }
        moves(r, sa);
        return (sa as u32, 0);
    }
    let (mut ins, mut outs, mut asking, mut stalled, mut dup) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut col = [0u64; P];
    let mut vcs_of = [0u64; P];
    for j in bits(sa) {
        let o = r.op[j] as usize;
        let ob = 1u64 << o;
        if r.occ[o * V + r.ov[j] as usize] >= DEPTH {
            stalled |= ob;
            continue;
        }
        asking |= 1 << j;
        let pb = 1u64 << (j / V);
        dup |= (ins & pb) | (outs & ob);
        ins |= pb;
        outs |= ob;
        col[o] |= pb;
        vcs_of[o] |= 1 << j;
    }
    if dup == 0 {
        moves(r, asking);
        return (asking as u32, stalled as u32);
    }
    let mut grants = [0u64; P];
    let mut granted = 0u64;
    for o in bits(outs) {
        let i = rr_pick(col[o], r.gptr[o] as usize);
        granted |= 1 << i;
        grants[i] |= 1 << o;
    }
    let mut won = 0u64;
    for p in bits(granted) {
        let o = rr_pick(grants[p], r.aptr[p] as usize);
        let cands = vcs_of[o] >> (p * V) & 0xf;
        let c = rr_pick(cands, r.rr[p] as usize);
        won |= 1 << (p * V + c);
    }
    moves(r, won);
    (won as u32, stalled as u32)
}

/// `rr_pick` on 32-bit lanes (masks below 32 bits, `from` below 32).
#[inline(always)]
fn pick32(mask: u32, from: u32) -> u32 {
    (from + mask.rotate_right(from).trailing_zeros()) & 31
}

#[inline(always)]
fn after32(i: u32, n: u32) -> u32 {
    let next = i + 1;
    next & (u32::from(next != n)).wrapping_neg()
}

/// The same decisions for 16 routers, every step for every lane.
#[inline(always)]
fn lanes_body(x: &mut Lanes, won: &mut [u32; L], stalled: &mut [u32; L]) {
    // Room downstream, by output VC.
    let mut room = [0u32; L];
    for k in 0..N {
        for l in 0..L {
            room[l] |= u32::from(x.occ[k][l] < u32::from(DEPTH)) << k;
        }
    }
    // Requests by input port (output bits), stalled outputs.
    let mut req = [[0u32; L]; P];
    let mut st = [0u32; L];
    let mut ask = [[0u32; L]; N];
    for j in 0..N {
        for l in 0..L {
            let want = (x.sa[l] >> j) & 1;
            let k = x.op[j][l] * V as u32 + x.ov[j][l];
            let fits = (room[l] >> k) & 1;
            let a = want & fits;
            ask[j][l] = a;
            st[l] |= (want & !fits & 1) << x.op[j][l];
            req[j / V][l] |= a << x.op[j][l];
        }
    }
    // Grant: each output picks an asking input round-robin.
    let mut grants = [[0u32; L]; P];
    for o in 0..P {
        for l in 0..L {
            let mut col = 0u32;
            for (p, rq) in req.iter().enumerate() {
                col |= ((rq[l] >> o) & 1) << p;
            }
            let g = pick32(col, x.gptr[o][l]);
            let any = u32::from(col != 0);
            for (p, gr) in grants.iter_mut().enumerate() {
                gr[l] |= (any & u32::from(g == p as u32)) << o;
            }
        }
    }
    // Accept: each granted input takes the output nearest its pointer and sends its asking VC
    // nearest its offset; the pointers move past the match.
    let mut w = [0u32; L];
    let mut newg = x.gptr;
    for p in 0..P {
        for l in 0..L {
            let gm = grants[p][l];
            let any = gm != 0;
            let o = pick32(gm, x.aptr[p][l]);
            let mut cands = 0u32;
            for c in 0..V {
                cands |= (ask[p * V + c][l] & u32::from(x.op[p * V + c][l] == o)) << c;
            }
            let c = pick32(cands, x.rr[p][l]);
            w[l] |= u32::from(any) << (p as u32 * V as u32 + c);
            if any {
                x.aptr[p][l] = after32(o, P as u32);
                x.rr[p][l] = after32(c, V as u32);
            }
            for (oo, ng) in newg.iter_mut().enumerate() {
                if any && o == oo as u32 {
                    ng[l] = after32(p as u32, P as u32);
                }
            }
        }
    }
    x.gptr = newg;
    *won = w;
    *stalled = st;
}

#[target_feature(enable = "avx512f,avx512cd,avx512vl,avx512bw,avx512dq,avx512vpopcntdq")]
#[inline(never)]
unsafe fn lanes_avx512(x: &mut Lanes, won: &mut [u32; L], stalled: &mut [u32; L]) {
    lanes_body(x, won, stalled)
}

#[inline(never)]
fn lanes_plain(x: &mut Lanes, won: &mut [u32; L], stalled: &mut [u32; L]) {
    lanes_body(x, won, stalled)
}

/// [`lanes_body`] written in AVX-512 intrinsics: one 16-lane register a field, masks for the
/// lanes' choices, nothing gathered.
#[target_feature(enable = "avx512f,avx512cd,avx512vl,avx512bw,avx512dq,avx512vpopcntdq")]
#[inline(never)]
unsafe fn lanes_intrinsics(x: &mut Lanes, won: &mut [u32; L], stalled: &mut [u32; L]) {
    use std::arch::x86_64::*;
    let ld = |a: &[u32; L]| _mm512_load_si512(a.as_ptr().cast());
    let one = _mm512_set1_epi32(1);
    let zero = _mm512_setzero_si512();
    // tz(m) for m != 0 (32 for 0): popcount((m & -m) - 1).
    let pick = |m: __m512i, from: __m512i| {
        let r = _mm512_rorv_epi32(m, from);
        let low = _mm512_and_si512(r, _mm512_sub_epi32(zero, r));
        let tz = _mm512_popcnt_epi32(_mm512_sub_epi32(low, one));
        _mm512_and_si512(_mm512_add_epi32(from, tz), _mm512_set1_epi32(31))
    };
    let after = |i: __m512i, n: i32| {
        let next = _mm512_add_epi32(i, one);
        let wrap = _mm512_cmpeq_epi32_mask(next, _mm512_set1_epi32(n));
        _mm512_mask_mov_epi32(next, wrap, zero)
    };
    let depth = _mm512_set1_epi32(i32::from(DEPTH));
    let mut room = zero;
    for k in 0..N {
        let m = _mm512_cmplt_epu32_mask(ld(&x.occ[k]), depth);
        room = _mm512_mask_or_epi32(room, m, room, _mm512_set1_epi32(1 << k));
    }
    let sa = ld(&x.sa);
    let mut req = [zero; P];
    let mut st = zero;
    let mut ask = [0u16; N];
    let mut ops = [zero; N];
    for j in 0..N {
        let want = _mm512_test_epi32_mask(sa, _mm512_set1_epi32(1 << j));
        let op = ld(&x.op[j]);
        ops[j] = op;
        let k = _mm512_add_epi32(_mm512_slli_epi32(op, 2), ld(&x.ov[j]));
        let fits = _mm512_test_epi32_mask(_mm512_srlv_epi32(room, k), one);
        let a = want & fits;
        ask[j] = a;
        let ob = _mm512_sllv_epi32(one, op);
        st = _mm512_mask_or_epi32(st, want & !fits, st, ob);
        req[j / V] = _mm512_mask_or_epi32(req[j / V], a, req[j / V], ob);
    }
    let mut grants = [zero; P];
    for o in 0..P {
        let mut col = zero;
        for (p, rq) in req.iter().enumerate() {
            let m = _mm512_test_epi32_mask(*rq, _mm512_set1_epi32(1 << o));
            col = _mm512_mask_or_epi32(col, m, col, _mm512_set1_epi32(1 << p));
        }
        let any = _mm512_test_epi32_mask(col, col);
        let g = pick(col, ld(&x.gptr[o]));
        for (p, gr) in grants.iter_mut().enumerate() {
            let m = any & _mm512_cmpeq_epi32_mask(g, _mm512_set1_epi32(p as i32));
            *gr = _mm512_mask_or_epi32(*gr, m, *gr, _mm512_set1_epi32(1 << o));
        }
    }
    let mut w = zero;
    let mut newg = [zero; P];
    for (o, ng) in newg.iter_mut().enumerate() {
        *ng = ld(&x.gptr[o]);
    }
    for p in 0..P {
        let gm = grants[p];
        let any = _mm512_test_epi32_mask(gm, gm);
        let aptr = ld(&x.aptr[p]);
        let o = pick(gm, aptr);
        let mut cands = zero;
        for c in 0..V {
            let m = ask[p * V + c] & _mm512_cmpeq_epi32_mask(ops[p * V + c], o);
            cands = _mm512_mask_or_epi32(cands, m, cands, _mm512_set1_epi32(1 << c));
        }
        let rr = ld(&x.rr[p]);
        let c = pick(cands, rr);
        let bit = _mm512_sllv_epi32(one, _mm512_add_epi32(c, _mm512_set1_epi32((p * V) as i32)));
        w = _mm512_mask_or_epi32(w, any, w, bit);
        let na = _mm512_mask_mov_epi32(aptr, any, after(o, P as i32));
        let nr = _mm512_mask_mov_epi32(rr, any, after(c, V as i32));
        _mm512_store_si512(x.aptr[p].as_mut_ptr().cast(), na);
        _mm512_store_si512(x.rr[p].as_mut_ptr().cast(), nr);
        let np = _mm512_set1_epi32(i32::from(crate::after(p, P)));
        for (oo, ng) in newg.iter_mut().enumerate() {
            let m = any & _mm512_cmpeq_epi32_mask(o, _mm512_set1_epi32(oo as i32));
            *ng = _mm512_mask_mov_epi32(*ng, m, np);
        }
    }
    for (o, ng) in newg.iter().enumerate() {
        _mm512_store_si512(x.gptr[o].as_mut_ptr().cast(), *ng);
    }
    _mm512_storeu_si512(won.as_mut_ptr().cast(), w);
    _mm512_storeu_si512(stalled.as_mut_ptr().cast(), st);
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_router(rng: &mut Rng, per_vc: f64) -> Router {
    let mut r = Router::default();
    for j in 0..N {
        if (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * (N as f64) < per_vc {
            r.sa |= 1 << j;
        }
        // DOR never turns back to its input port.
        let mut o = rng.below(P as u64) as u8;
        if o as usize == j / V {
            o = ((o as usize + 1) % P) as u8;
        }
        r.op[j] = o;
        r.ov[j] = rng.below(V as u64) as u8;
    }
    for k in 0..N {
        // Room on 9 in 10 output VCs.
        r.occ[k] = if rng.below(10) == 0 {
            DEPTH
        } else {
            rng.below(u64::from(DEPTH)) as u8
        };
    }
    for p in 0..P {
        r.gptr[p] = rng.below(P as u64) as u8;
        r.aptr[p] = rng.below(P as u64) as u8;
        r.rr[p] = rng.below(V as u64) as u8;
    }
    r
}

fn to_lanes(rs: &[Router]) -> Lanes {
    let mut x = Lanes {
        sa: [0; L],
        op: [[0; L]; N],
        ov: [[0; L]; N],
        occ: [[0; L]; N],
        gptr: [[0; L]; P],
        aptr: [[0; L]; P],
        rr: [[0; L]; P],
    };
    for (l, r) in rs.iter().enumerate() {
        x.sa[l] = r.sa;
        for j in 0..N {
            x.op[j][l] = r.op[j].into();
            x.ov[j][l] = r.ov[j].into();
            x.occ[j][l] = r.occ[j].into();
        }
        for p in 0..P {
            x.gptr[p][l] = r.gptr[p].into();
            x.aptr[p][l] = r.aptr[p].into();
            x.rr[p][l] = r.rr[p].into();
        }
    }
    x
}

fn main() {
    let per_vc: f64 = match std::env::args().nth(1) {
        None => 1.6,
        Some(a) => match a.parse::<f64>() {
            Ok(d) if d.is_finite() && (0.0..=N as f64).contains(&d) => d,
            _ => {
                eprintln!("lane-sa: the argument (asking VCs a router): expected a number from 0 to {N}, got {a:?}");
                std::process::exit(2);
            }
        },
    };
    let groups = 4096;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let routers: Vec<Router> = (0..groups * L)
        .map(|_| random_router(&mut rng, per_vc))
        .collect();
    let lanes0: Vec<Lanes> = routers.chunks(L).map(to_lanes).collect();
    let avx = is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512cd")
        && is_x86_feature_detected!("avx512vpopcntdq");
    // Same decisions.
    for (g, chunk) in routers.chunks(L).enumerate() {
        let mut x = lanes0[g];
        let (mut won, mut st) = ([0; L], [0; L]);
        if avx {
            let mut y = x;
            let (mut won2, mut st2) = ([0; L], [0; L]);
            unsafe { lanes_avx512(&mut x, &mut won, &mut st) };
            unsafe { lanes_intrinsics(&mut y, &mut won2, &mut st2) };
            assert_eq!((won, st), (won2, st2), "intrinsics, group {g}");
            assert_eq!(
                (x.gptr, x.aptr, x.rr),
                (y.gptr, y.aptr, y.rr),
                "intrinsics' pointers"
            );
        } else {
            lanes_plain(&mut x, &mut won, &mut st);
        }
        for (l, r0) in chunk.iter().enumerate() {
            let mut r = *r0;
            let (w, s) = scalar(&mut r);
            assert_eq!((w, s), (won[l], st[l]), "group {g} lane {l}: {r0:?}");
            for p in 0..P {
                assert_eq!(u32::from(r.gptr[p]), x.gptr[p][l], "gptr");
                assert_eq!(u32::from(r.aptr[p]), x.aptr[p][l], "aptr");
                assert_eq!(u32::from(r.rr[p]), x.rr[p][l], "rr");
            }
        }
    }
    println!(
        "same decisions on {} routers ({per_vc} asking VCs a router on average)",
        groups * L
    );
    let reps = 200;
    let time = |name: &str, f: &mut dyn FnMut()| {
        let t = Instant::now();
        for _ in 0..reps {
            f();
        }
        let ns = t.elapsed().as_nanos() as f64 / (reps * groups * L) as f64;
        println!("{name}: {ns:.2} ns a router");
        ns
    };
    let mut rs = routers.clone();
    let s = time("scalar (sa_fast's branches)", &mut || {
        for r in rs.iter_mut() {
            r.sa = black_box(r.sa);
            black_box(scalar(r));
        }
    });
    let mut ls = lanes0.clone();
    let p = time("lanes, default target", &mut || {
        for x in ls.iter_mut() {
            let (mut w, mut st) = ([0; L], [0; L]);
            lanes_plain(black_box(x), &mut w, &mut st);
            black_box((w, st));
        }
    });
    if avx {
        let mut ls = lanes0.clone();
        let a = time("lanes, AVX-512", &mut || {
            for x in ls.iter_mut() {
                let (mut w, mut st) = ([0; L], [0; L]);
                unsafe { lanes_avx512(black_box(x), &mut w, &mut st) };
                black_box((w, st));
            }
        });
        let mut ls = lanes0.clone();
        let i = time("lanes, AVX-512 intrinsics", &mut || {
            for x in ls.iter_mut() {
                let (mut w, mut st) = ([0; L], [0; L]);
                unsafe { lanes_intrinsics(black_box(x), &mut w, &mut st) };
                black_box((w, st));
            }
        });
        println!("scalar / intrinsics lanes: {:.2}x", s / i);
        println!(
            "scalar / AVX-512 lanes: {:.2}x; scalar / plain lanes {:.2}x",
            s / a,
            s / p
        );
    }
}

//! Embedding, vector search and name keys.
//!
//! - `hash_embed/*`: the default `HashEmbedder` on a workload concept name and on a
//!   200-character sentence;
//! - `vector_top10/{sequential,parallel,auto}/{2000,10000,30000,100000}`: `VectorIndex::top_k`
//!   with k = 10 over rows of dimension 128 (embeddings of the workload's concept names), on
//!   the calling thread, always on rayon's pool, and on the automatic path (parallel from
//!   `PARALLEL_MIN_ROWS` rows): where the parallel path starts to pay;
//! - `recall_similar/100000`: what the semantic layer's `recall_similar` costs: embed the
//!   query, then the automatic top 10 (target: 10 ms or less);
//! - `name/*`: `name_key` and `name_similarity` as the semantic layer's `find_or_create`
//!   uses them.
//!
//! Run with `cargo bench -p maxim-benches --bench embed`.

use std::hint::black_box;

use atl::names::{name_key, name_key_into, name_similarity};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use maxim_benches::concept;
use maxim_core::RecordId;
use maxim_core::embed::{Embedder, HashEmbedder, Parallelism, VectorIndex};

const SENTENCE: &str = "The robot navigated to the kitchen, grasped the red coffee mug from the top shelf, \
                        carried it carefully past the sleeping cat and placed it next to the batteries \
                        on the dining room table before noon today.";

/// An index of the embeddings of the first `n` workload concept names.
fn concept_index(embedder: &HashEmbedder, n: usize) -> VectorIndex {
    let mut index = VectorIndex::with_capacity(embedder.dim(), n).expect("a valid dimension");
    let mut v = vec![0.0; embedder.dim()];
    for j in 0..n {
        embedder.embed_into(&concept(j).0, &mut v);
        index.add(RecordId::from_u128(j as u128 + 1), &v).expect("a finite vector of the index's dimension");
    }
    index
}

fn hash_embed(c: &mut Criterion) {
    let embedder = HashEmbedder::default();
    let mut out = vec![0.0; embedder.dim()];
    let name = concept(4242).0;
    let mut group = c.benchmark_group("hash_embed");
    group.bench_function("concept_name", |b| b.iter(|| embedder.embed_into(black_box(&name), &mut out)));
    assert!((190..=210).contains(&SENTENCE.len()), "{}", SENTENCE.len());
    group.bench_function("sentence_200", |b| b.iter(|| embedder.embed_into(black_box(SENTENCE), &mut out)));
    group.finish();
}

fn vector_top10(c: &mut Criterion) {
    let embedder = HashEmbedder::default();
    let query = embedder.embed("concept 04242");
    let mut group = c.benchmark_group("vector_top10");
    for n in [2_000, 10_000, 30_000, 100_000] {
        let index = concept_index(&embedder, n);
        group.sample_size(if n >= 100_000 { 30 } else { 100 });
        let modes = [
            ("sequential", Parallelism::Sequential),
            ("parallel", Parallelism::Parallel),
            ("auto", Parallelism::Auto),
        ];
        for (label, mode) in modes {
            group.bench_with_input(BenchmarkId::new(label, n), &index, |b, index| {
                b.iter(|| index.top_k_with(black_box(&query), 10, mode, |_| true).expect("a valid query"));
            });
        }
    }
    group.finish();
}

fn recall_similar(c: &mut Criterion) {
    let embedder = HashEmbedder::default();
    let index = concept_index(&embedder, 100_000);
    let mut group = c.benchmark_group("recall_similar");
    group.sample_size(30);
    group.bench_function("100000", |b| {
        b.iter(|| {
            let q = embedder.embed(black_box("coffee mugs in the kitchen"));
            index.top_k(&q, 10).expect("a valid query")
        });
    });
    group.finish();
}

fn names(c: &mut Criterion) {
    let mut group = c.benchmark_group("name");
    group.bench_function("key", |b| b.iter(|| name_key(black_box("Red Coffee_Mugs-2"))));
    let mut buf = String::new();
    group.bench_function("key_into", |b| {
        b.iter(|| {
            name_key_into(black_box("Red Coffee_Mugs-2"), &mut buf);
            buf.len()
        });
    });
    let (a, b_key) = (name_key("red coffe mug 2"), name_key("Red Coffee_Mugs-2"));
    group.bench_function("similarity", |b| b.iter(|| name_similarity(black_box(&a), black_box(&b_key))));
    group.bench_function("key_and_similarity", |b| {
        b.iter(|| {
            name_key_into(black_box("Red Coffee_Mugs-2"), &mut buf);
            name_similarity(&a, &buf)
        });
    });
    group.finish();
}

criterion_group!(benches, hash_embed, vector_top10, recall_similar, names);
criterion_main!(benches);

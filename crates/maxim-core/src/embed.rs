//! Embeddings: the [`Embedder`] trait.

/// Turns text into a fixed-dimension vector for similarity search.
pub trait Embedder: Send + Sync {
    /// A stable name for the model and its settings; snapshots record it so vectors made by
    /// different embedders are never mixed.
    fn name(&self) -> &str;

    /// The vectors' dimension.
    fn dim(&self) -> usize;

    /// Writes the embedding of `text` into `out` (of length [`dim`](Self::dim)), L2-normalised,
    /// or all zeros when the text has nothing to embed.
    fn embed_into(&self, text: &str, out: &mut [f32]);

    /// The embedding of `text` as a new vector.
    fn embed(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0; self.dim()];
        self.embed_into(text, &mut v);
        v
    }
}

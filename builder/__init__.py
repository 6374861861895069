"""The book's build pipeline: course -> source -> cells -> labs -> render -> write.

Each stage is one module with one job; `builder.pipeline.build` runs them in order."""

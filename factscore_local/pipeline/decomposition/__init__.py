"""From a generation to atomic facts: clean-up, sentences, the LM's decomposition, its
post-processing, fragments, abstentions and facts that do not stand alone."""

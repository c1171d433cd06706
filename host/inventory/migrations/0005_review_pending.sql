-- A version whose manifest is dynamic tool builder output still awaiting
-- review (manifest [builder] review_status): it installs quarantined and
-- keeps this flag until an operator approves it (Tx.ApproveReview, journaled
-- as skill.review_approved). Enable refuses a version while the flag is set.
ALTER TABLE skills ADD COLUMN review_pending INTEGER NOT NULL DEFAULT 0 CHECK (review_pending IN (0, 1));

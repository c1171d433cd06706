-- Placeholder for step 6, which the approvals change (issue 24 point 1)
-- owns; it lets step 7 apply on a branch that lacks it. Replace it with
-- the real step 6 when the branches are merged.
SELECT 1;

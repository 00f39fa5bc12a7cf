-- A manual invoice's `rendering` (amount_tax_display, pdf page size), as its create or update set it; null: never set.
ALTER TABLE "invoice_details" ADD COLUMN "rendering" JSONB;

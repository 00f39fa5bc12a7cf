-- AlterTable
-- A price whose customer chooses the amount ("pay what you want"): {maximum, minimum, preset}.
ALTER TABLE "prices" ADD COLUMN "custom_unit_amount" JSONB;

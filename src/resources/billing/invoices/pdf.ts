import PDFDocument from 'pdfkit';
import { day, money, STATUS_TEXT, type InvoiceView } from './view';

// The invoice's PDF (`invoice_pdf`), drawn with pdfkit's built-in Helvetica (no font files, nothing
// fetched). `compress: false` leaves the content streams readable (tests read the text).

export function invoicePdf(view: InvoiceView, options: { compress?: boolean } = {}): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A4', margin: 50, compress: options.compress ?? true, info: { Title: `Invoice ${view.number ?? view.id}`, Producer: 'Sandbank' } });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  const left = 50;
  const right = doc.page.width - 50;
  const amountX = right - 120;

  doc.font('Helvetica-Bold').fontSize(22).text('Invoice', left, 50);
  doc.font('Helvetica').fontSize(9).fillColor('#697386').text('Sandbank test mode: not a real invoice.', left, 78);
  doc.fillColor('#1a1f36').fontSize(10);
  const facts: [string, string][] = [
    ['Invoice number', view.number ?? view.id],
    ['Date of issue', day(view.finalizedAt)],
    ['Date due', day(view.dueDate)],
    ['Status', STATUS_TEXT[view.status] ?? view.status],
  ];
  if (view.paidAt !== null) facts.push(['Paid on', day(view.paidAt)]);
  let y = 105;
  for (const [label, value] of facts) {
    doc.font('Helvetica-Bold').text(label, left, y, { width: 110 });
    doc.font('Helvetica').text(value, left + 115, y, { width: 300 });
    y += 15;
  }
  y += 10;
  doc.font('Helvetica-Bold').text('Bill to', left, y);
  y += 15;
  doc.font('Helvetica');
  for (const text of [view.customerName, view.customerEmail]) {
    if (!text) continue;
    doc.text(text, left, y, { width: 400 });
    y = doc.y;
  }
  if (view.description) {
    y += 10;
    doc.text(view.description, left, y, { width: right - left });
    y = doc.y;
  }

  y += 20;
  doc.font('Helvetica-Bold').text('Description', left, y).text('Qty', amountX - 60, y, { width: 50, align: 'right' }).text('Amount', amountX, y, { width: 120, align: 'right' });
  y += 15;
  doc.moveTo(left, y).lineTo(right, y).strokeColor('#c1c9d2').stroke();
  y += 6;
  doc.font('Helvetica');
  for (const line of view.lines) {
    if (y > doc.page.height - 120) {
      doc.addPage();
      y = 50;
    }
    doc.text(line.description ?? '', left, y, { width: amountX - 70 - left });
    const next = doc.y;
    doc.text(line.quantity === null ? '' : String(line.quantity), amountX - 60, y, { width: 50, align: 'right' });
    doc.text(money(view, line.amount), amountX, y, { width: 120, align: 'right' });
    y = Math.max(next, y + 14) + 4;
  }
  doc.moveTo(left, y).lineTo(right, y).strokeColor('#c1c9d2').stroke();
  y += 8;
  const totals: [string, number, boolean][] = [['Subtotal', view.subtotal, false]];
  if (view.discount !== 0) totals.push(['Discount', -view.discount, false]);
  if (view.tax !== 0) totals.push(['Tax', view.tax, false]);
  totals.push(['Total', view.total, false], ['Amount paid', view.amountPaid, false], ['Amount due', view.amountRemaining, true]);
  for (const [label, amount, strong] of totals) {
    doc.font(strong ? 'Helvetica-Bold' : 'Helvetica').text(label, amountX - 160, y, { width: 150, align: 'right' }).text(money(view, amount), amountX, y, { width: 120, align: 'right' });
    y += 15;
  }
  if (view.footer) doc.font('Helvetica').fontSize(9).text(view.footer, left, y + 20, { width: right - left });
  doc.end();
  return done;
}
